/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_ui.c - GET /ui/: the reviewer inbox's static files
 *
 * The inbox (docs/advisor.md#inbox) is three files under advisor/ui/,
 * compiled in by common/embed.sh (advisor_data_index_html, ...): no CDN, no
 * files read at run time. They are public - they hold no data and no
 * secret; every API call the page makes carries the admin token the
 * reviewer typed, from sessionStorage, as a bearer header (never a cookie).
 *
 * Every answer carries a strict Content-Security-Policy: scripts and styles
 * only from these files (no inline code, no eval), fetch only to this
 * origin, no frames, no forms, no base URL. Together with the page's rule of
 * rendering agent-written text only through textContent, an injected
 * "<img onerror=...>" in a rationale stays text.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "advisor/http/http.h"

extern const char advisor_data_index_html[];
extern const size_t advisor_data_index_html_len;
extern const char advisor_data_app_js[];
extern const size_t advisor_data_app_js_len;
extern const char advisor_data_app_css[];
extern const size_t advisor_data_app_css_len;

#define UI_CSP                                                                      \
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " \
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static const struct {
    const char *path;
    const char *data;
    const size_t *len;
    const char *content_type;
} assets[] = {
    {"/ui/", advisor_data_index_html, &advisor_data_index_html_len, "text/html; charset=utf-8"},
    {"/ui/app.js", advisor_data_app_js, &advisor_data_app_js_len, "text/javascript; charset=utf-8"},
    {"/ui/app.css", advisor_data_app_css, &advisor_data_app_css_len, "text/css; charset=utf-8"},
};

void advisor_ui_reply(const char *path, struct httpd_reply *r)
{
    r->csp = UI_CSP;
    if (strcmp(path, "/ui") == 0 || strcmp(path, "/") == 0) {
        /* Relative URLs in the page ("app.js") resolve against "/ui/"; the
         * advisor's root leads a browser to the inbox. */
        r->status = 308;
        r->location = "/ui/";
        r->raw = NULL;
        r->raw_static = NULL;
        r->raw_len = 0;
        r->content_type = "text/plain; charset=utf-8";
        return;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(assets); i++) {
        if (strcmp(path, assets[i].path) == 0) {
            r->status = 200;
            r->raw_static = assets[i].data;
            r->raw_len = *assets[i].len;
            r->content_type = assets[i].content_type;
            return;
        }
    }
    httpd_reply_error(r, 404, "not_found", "no such file");
}
