/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_recent.c - the most recent denials of every sandbox
 *
 * A ring kept across the mapper's flushes (memory only): the mapper
 * (advisor_mapper.c) adds each denial it takes in, the narrowed
 * suggestions (advisor_suggest.c) read the binaries, hosts and paths an
 * agent was really denied. Below both, so the lifecycle never calls the
 * mapper, which submits through it.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/core/core.h"

#define RECENT_MAX 256u

struct recent_entry {
    char *sandbox;
    char *host;
    char *binary;
    char *method;
    char *path;
    int64_t port;
};

struct advisor_recent {
    pthread_mutex_t mu;
    struct recent_entry e[RECENT_MAX];
    size_t next;
};

struct advisor_recent *advisor_recent_new(void)
{
    struct advisor_recent *r = pv_calloc(1, sizeof(*r));

    if (r != NULL) {
        pthread_mutex_init(&r->mu, NULL);
    }
    return r;
}

static void entry_clear(struct recent_entry *r)
{
    free(r->sandbox);
    free(r->host);
    free(r->binary);
    free(r->method);
    free(r->path);
    memset(r, 0, sizeof(*r));
}

void advisor_recent_free(struct advisor_recent *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < RECENT_MAX; i++) {
        entry_clear(&r->e[i]);
    }
    pthread_mutex_destroy(&r->mu);
    free(r);
}

void advisor_recent_add(struct advisor_recent *ring, const char *sandbox, const char *host,
                        int64_t port, const char *bin, const char *method, const char *path)
{
    struct recent_entry *r;

    if (ring == NULL) {
        return;
    }
    pthread_mutex_lock(&ring->mu);
    r = &ring->e[ring->next];
    entry_clear(r);
    r->sandbox = pv_strdup(sandbox);
    r->host = pv_strdup(host);
    r->binary = pv_strdup(bin);
    r->method = pv_strdup(method != NULL ? method : "");
    r->path = pv_strdup(path != NULL ? path : "");
    r->port = port;
    if (r->sandbox == NULL || r->host == NULL || r->binary == NULL || r->method == NULL ||
        r->path == NULL) {
        entry_clear(r);
    } else {
        ring->next = (ring->next + 1) % RECENT_MAX;
    }
    pthread_mutex_unlock(&ring->mu);
}

json_t *advisor_recent_get(struct advisor_recent *ring, const char *sandbox)
{
    json_t *out = json_array();

    if (ring == NULL || out == NULL) {
        return out;
    }
    pthread_mutex_lock(&ring->mu);
    for (size_t i = 0; i < RECENT_MAX; i++) {
        const struct recent_entry *r = &ring->e[(ring->next + RECENT_MAX - 1 - i) % RECENT_MAX];
        if (r->sandbox == NULL || strcmp(r->sandbox, sandbox) != 0) {
            continue;
        }
        json_array_append_new(out, json_pack("{s:s,s:I,s:s,s:s,s:s}", "host", r->host, "port",
                                             (json_int_t)r->port, "binary", r->binary, "method",
                                             r->method, "path", r->path));
    }
    pthread_mutex_unlock(&ring->mu);
    return out;
}
