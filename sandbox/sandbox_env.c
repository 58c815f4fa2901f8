/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_env.c - the command's environment (docs/sandbox.md#environment).
 *
 * Nothing of the caller's environment passes but the terminal and locale
 * variables and PATH, and what --env names: an agent's secrets stay out
 * unless asked for (credential placeholders are the way to use them). Set
 * for every common client: the proxy in both spellings (curl reads only
 * the lowercase http_proxy), NO_PROXY empty (every connection goes to the
 * proxy; nothing else is reachable anyway), the proxy's CA for OpenSSL,
 * curl, git, Python requests and pip, npm and node
 * (docs/operations.md#client-ca), and Node 24's NODE_USE_ENV_PROXY.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv.h"
#include "sandbox/sandbox_int.h"

#define PROXY_URL "http://127.0.0.1:" PV_STR(SANDBOX_PROXY_PORT)
#define BUNDLE SANDBOX_DIR "/ca-bundle.crt"
#define ENV_MAX (SANDBOX_ENV_MAX + 64)

static const char *const passed[] = {"PATH",       "TERM",       "COLORTERM", "LANG",
                                     "LANGUAGE",   "LC_ALL",     "LC_CTYPE",  "LC_MESSAGES",
                                     "LC_COLLATE", "LC_NUMERIC", "TZ"};

static const char *const fixed[] = {
    "http_proxy=" PROXY_URL,
    "https_proxy=" PROXY_URL,
    "HTTP_PROXY=" PROXY_URL,
    "HTTPS_PROXY=" PROXY_URL,
    "no_proxy=",
    "NO_PROXY=",
    "SSL_CERT_FILE=" BUNDLE,
    "CURL_CA_BUNDLE=" BUNDLE,
    "REQUESTS_CA_BUNDLE=" BUNDLE,
    "PIP_CERT=" BUNDLE,
    "GIT_SSL_CAINFO=" BUNDLE,
    "npm_config_cafile=" BUNDLE,
    "NODE_EXTRA_CA_CERTS=" SANDBOX_DIR "/ca.crt",
    "NODE_USE_ENV_PROXY=1",
};

struct env_buf {
    char **v;
    size_t n;
    bool oom;
};

static size_t name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');

    return eq != NULL ? (size_t)(eq - kv) : strlen(kv);
}

/* Set "NAME=VALUE" (a copy), replacing an earlier NAME. */
static void put(struct env_buf *e, const char *kv)
{
    size_t nl = name_len(kv);
    char *copy = pv_strdup(kv);

    if (copy == NULL) {
        e->oom = true;
        return;
    }
    for (size_t i = 0; i < e->n; i++) {
        if (strncmp(e->v[i], kv, nl) == 0 && e->v[i][nl] == '=') {
            free(e->v[i]);
            e->v[i] = copy;
            return;
        }
    }
    if (e->n + 1 >= ENV_MAX) {
        free(copy);
        return;
    }
    e->v[e->n++] = copy;
}

static void put2(struct env_buf *e, const char *name, const char *value)
{
    char buf[PATH_MAX + 128];

    snprintf(buf, sizeof(buf), "%s=%s", name, value);
    put(e, buf);
}

char **sandbox_env(const struct sandbox_opts *o, const struct sandbox_plan *plan, bool skill)
{
    struct env_buf e = {pv_calloc(ENV_MAX, sizeof(char *)), 0, false};
    const struct passwd *pw = getpwuid(plan->uid);
    const char *user = pw != NULL ? pw->pw_name : plan->user;

    if (e.v == NULL) {
        return NULL;
    }
    put(&e, "PATH=/usr/local/bin:/usr/bin:/bin");
    for (size_t i = 0; i < PV_ARRAY_LEN(passed); i++) {
        const char *v = getenv(passed[i]);
        if (v != NULL) {
            put2(&e, passed[i], v);
        }
    }
    put2(&e, "HOME", plan->home);
    put2(&e, "USER", user);
    put2(&e, "LOGNAME", user);
    put2(&e, "PROVISO_SANDBOX", plan->hostname);
    for (size_t i = 0; i < PV_ARRAY_LEN(fixed); i++) {
        put(&e, fixed[i]);
    }
    if (skill) {
        put(&e, "PROVISO_SKILL_FILE=" SANDBOX_DIR "/skills/policy_advisor.md");
    }
    for (size_t i = 0; i < o->nenv; i++) {
        const char *v = strchr(o->env[i], '=') != NULL ? o->env[i] : getenv(o->env[i]);
        if (v == o->env[i]) {
            put(&e, v);
        } else if (v != NULL) {
            put2(&e, o->env[i], v);
        }
    }
    if (e.oom) {
        sandbox_env_free(e.v);
        return NULL;
    }
    return e.v;
}

void sandbox_env_free(char **envp)
{
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        free(envp[i]);
    }
    free(envp);
}
