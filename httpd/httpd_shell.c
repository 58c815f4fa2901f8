/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_shell.c - the service shell every proviso server shares
 *
 * proviso-prover and proviso-advisor start and stop the same way: signals
 * are blocked before any thread exists and taken synchronously with
 * sigwait() on the main thread; the bearer token comes from a file, an
 * inherited descriptor or a freshly generated 0600 file; GET /healthz
 * answers the same constant body; the OpenAPI document is a JSON file
 * compiled in by common/embed.sh and parsed once here. docs/architecture.md
 * ("The service shell") describes the whole contract.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "httpd/httpd.h"

json_t *httpd_doc_parse(const char *text, size_t len)
{
    return json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
}

void httpd_reply_healthz(struct httpd_reply *r)
{
    static const char ok[] = "{\"status\":\"ok\"}\n";

    r->status = 200;
    r->raw_static = ok;
    r->raw_len = sizeof(ok) - 1;
    r->content_type = "application/json";
}

pv_result httpd_token_load(struct httpd_token *t, const char *file, int fd, const char *gen_dir,
                           char *err, size_t errlen)
{
    if (file != NULL) {
        return httpd_token_from_file(t, file, err, errlen);
    }
    if (fd >= 0) {
        return httpd_token_from_fd(t, fd, err, errlen);
    }
    return httpd_token_generate(t, gen_dir, err, errlen);
}

void httpd_signals_block(sigset_t *sigs)
{
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

int httpd_signals_wait(const sigset_t *sigs)
{
    int sig = 0;

    while (sig != SIGTERM && sig != SIGINT) {
        if (sigwait(sigs, &sig) != 0) {
            sig = 0;
        }
    }
    return sig;
}
