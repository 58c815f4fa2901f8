/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_advisor_args.c - advisor mode's command-line options
 *
 * proxy_advisor_args() checks --advisor (repeatable: replicas of one
 * gateway), --sandbox, --token-file, --skill-dir and --sandbox-address
 * before anything starts, so that a bad value is a usage error (exit 2)
 * with the value named, and prepares the core's configuration for advisor
 * mode: the file each revision is written to, no periodic file check, the
 * start-up quarantine and the mode's start function.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "proxy/advisor/proxy_advisor.h"
#include "proxy/proxy_int.h"

/* ---------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------- */

/* Does libcurl read 'u' as a URL with a host, and no query or fragment
 * (the routes' paths are appended to it)? Its normal form into 'canon'
 * (scheme and host in lower case, the default port and a trailing slash
 * alike), so that one replica is not given twice under two spellings. */
static bool url_ok(const char *u, char *canon, size_t canonlen)
{
    CURLU *h = curl_url();
    char *host = NULL;
    char *rest = NULL;
    bool ok = h != NULL && curl_url_set(h, CURLUPART_URL, u, 0) == CURLUE_OK &&
              curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK && host != NULL &&
              host[0] != '\0';

    if (ok && curl_url_get(h, CURLUPART_QUERY, &rest, 0) == CURLUE_OK) {
        ok = false;
    }
    curl_free(rest);
    rest = NULL;
    if (ok && curl_url_get(h, CURLUPART_FRAGMENT, &rest, 0) == CURLUE_OK) {
        ok = false;
    }
    curl_free(rest);
    rest = NULL;
    canon[0] = '\0';
    if (ok && curl_url_get(h, CURLUPART_URL, &rest, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        rest != NULL) {
        size_t n = strlen(rest);
        while (n > 0 && rest[n - 1] == '/') {
            n--;
        }
        snprintf(canon, canonlen, "%.*s", (int)n, rest);
        /* the scheme and the host, up to the path, in lower case */
        for (char *c = canon + strcspn(canon, ":") + 3; c < canon + strlen(canon) && *c != '/';
             c++) {
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        }
    }
    curl_free(rest);
    curl_free(host);
    curl_url_cleanup(h);
    return ok;
}

/* Checks --advisor's URLs; false after saying what is wrong. */
static bool advisor_urls_ok(const struct proxy_config *cfg)
{
    static char canon[PROXY_ADVISORS_MAX][1100];

    for (size_t i = 0; i < cfg->nadvisor_urls && i < PROXY_ADVISORS_MAX; i++) {
        const char *u = cfg->advisor_urls[i];
        if (strlen(u) > 1024) {
            fprintf(stderr, "proviso-proxy: --advisor: URL too long\n");
            return false;
        }
        if ((strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) ||
            !url_ok(u, canon[i], sizeof(canon[i]))) {
            fprintf(stderr,
                    "proviso-proxy: --advisor %s: an http:// or https:// URL with a host (and "
                    "no query or fragment) is needed\n",
                    u);
            return false;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(canon[k], canon[i]) == 0) {
                fprintf(stderr, "proviso-proxy: --advisor %s given twice (also as %s)\n", u,
                        cfg->advisor_urls[k]);
                return false;
            }
        }
    }
    return true;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 128) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.')) {
            return false;
        }
    }
    return true;
}

int proxy_advisor_args(struct proxy_config *cfg, char *buf, size_t len)
{
    const char *u = cfg->advisor_url;

    if (u == NULL) {
        if (cfg->sandbox != NULL || cfg->token_file != NULL || cfg->skill_dir != NULL ||
            cfg->skill_shown != NULL || cfg->nsandbox_addrs > 0) {
            fprintf(stderr, "proviso-proxy: --sandbox, --token-file, --skill-dir, --skill-shown "
                            "and --sandbox-address need --advisor\n");
            return -1;
        }
        if (cfg->policy_path == NULL) {
            fprintf(stderr, "proviso-proxy: --policy FILE or --advisor URL is required\n");
            return -1;
        }
        return 0;
    }
    if (cfg->policy_path != NULL) {
        fprintf(stderr, "proviso-proxy: --policy and --advisor are exclusive\n");
        return -1;
    }
    if (!advisor_urls_ok(cfg)) {
        return -1;
    }
    if (cfg->sandbox == NULL || !name_ok(cfg->sandbox)) {
        fprintf(stderr, "proviso-proxy: --advisor needs --sandbox NAME (letters, digits, '.', "
                        "'_', '-')\n");
        return -1;
    }
    if (cfg->token_file == NULL) {
        fprintf(stderr, "proviso-proxy: --advisor needs --token-file FILE (the sandbox's "
                        "token)\n");
        return -1;
    }
    for (size_t i = 0; i < cfg->nsandbox_addrs; i++) {
        struct model_ip ip;
        const char *v = cfg->sandbox_addrs[i];
        if (!model_ip_parse(v, strlen(v), &ip)) {
            fprintf(stderr, "proviso-proxy: --sandbox-address %s: not an IP address\n", v);
            return -1;
        }
    }
    if ((size_t)snprintf(buf, len, "%s/advisor-policy.yaml", cfg->data_dir) >= len) {
        fprintf(stderr, "proviso-proxy: --data-dir too long\n");
        return -1;
    }
    /* a file left by an earlier run is not a revision this run has seen */
    (void)unlink(buf);
    cfg->policy_path = buf;
    cfg->reload_check_ms = 0;
    cfg->start_quarantine = "fail-closed: no policy revision has loaded from the advisor yet";
    cfg->mode_start = proxy_advisor_start;
    return 0;
}
