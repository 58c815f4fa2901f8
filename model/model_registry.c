/* SPDX-License-Identifier: Apache-2.0 */
/* model_registry.c - the binary and API registries (world model)
 *
 * Binary descriptors (`binaries/NAME.yaml`) say what a program can do on the
 * network: its protocols, whether any of them bypasses L7 inspection
 * (docs/semantics.md#binary-classes), whether it can exfiltrate data or
 * construct arbitrary HTTP. API descriptors (`apis/NAME.yaml`) name the
 * actions and risks of an HTTP API's method/path pairs, so that a witness
 * request can be annotated (`PUT /repos/o/r/contents/x` -> write_file, high).
 *
 * The registry is either the embedded copy (model_registry_data.c, generated
 * from model/registry/ by embed.sh) or a directory override that replaces it
 * whole. Descriptors are strict: unknown keys, wrong types, bad globs and
 * duplicate binary paths or API names are errors at file:line:col, and any
 * error fails the whole load. Each path of a descriptor (`binary` and every
 * alias) becomes one entry with its own compiled glob and the descriptor's
 * flags, in file order then path order.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "common/pv_file.h"
#include "model/model_int.h"

#define MAX_DESCRIPTOR_BYTES (1024u * 1024u)
#define MAX_FILES 4096
#define MAX_HOST 253

/* Produced by model/registry/embed.sh (model_registry_data.c). */
struct model_embedded_file {
    const char *name;
    const char *data;
};
extern const struct model_embedded_file model_embedded_binaries[];
extern const struct model_embedded_file model_embedded_apis[];

enum action_type { ACTION_READ, ACTION_WRITE, ACTION_DESTRUCTIVE };

struct reg_action {
    char *name;
    enum action_type type;
    char *description;
};

struct reg_protocol {
    char *name;
    char *transport;
    char *description;
    bool bypasses_l7;
    struct reg_action *actions;
    size_t nactions;
};

struct reg_binary {
    char *name;   /* descriptor file stem ("git") */
    char **paths; /* `binary` then the aliases */
    struct model_mark *path_marks;
    size_t npaths;
    char *description;
    char *exfil_mechanism;
    struct reg_protocol *protocols;
    size_t nprotocols;
    struct model_strlist spawns;
    /* read by the walker, then made paths[] */
    struct model_sval binary;
    struct model_strlist aliases;
    bool can_exfiltrate;
    bool can_construct_http;
    bool bypasses_l7; /* OR over the protocols */
};

struct reg_entry {
    struct model_glob *glob;
    size_t binary; /* index into bins */
};

struct api_action {
    char *method; /* upper-case */
    char *path;
    struct model_mark path_mark;
    struct model_glob *path_glob;
    char *action;
    char *risk;
    char *description;
};

struct reg_api {
    char *api;
    char *host; /* normalised */
    struct model_glob *host_glob;
    bool host_is_ip;
    uint16_t port;
    char *credential_type;
    char *description;
    struct api_action *actions;
    size_t nactions;
};

struct model_registry {
    struct reg_binary *bins;
    size_t nbins;
    struct reg_entry *entries;
    size_t nentries;
    struct reg_api *apis;
    size_t napis;
};

/* ===========================================================================
 * Node helpers
 * ========================================================================= */

/* port: an integer in 1..65535 */
static void f_port(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                   const struct model_node *v, void *obj)
{
    uint64_t n = 0;
    bool numeric =
        v->kind == MODEL_NODE_SCALAR && (v->json_typed ? v->json_type == JSON_INTEGER : !v->quoted);

    (void)key;
    if (!numeric || !pv_ok(pv_parse_u64(v->scalar, v->scalar_len, 65535, &n)) || n == 0) {
        model_walk_err(w, v->mark, "field '%s' must be an integer in 1..65535", f->key);
        return;
    }
    *MODEL_FIELD_MEMBER(obj, f, uint16_t) = (uint16_t)n;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i]);
    }
    free(v);
}

/* ===========================================================================
 * Freeing
 * ========================================================================= */

static void binary_clear(struct reg_binary *b)
{
    free(b->name);
    free_strv(b->paths, b->npaths);
    free(b->path_marks);
    free(b->description);
    free(b->exfil_mechanism);
    for (size_t i = 0; i < b->nprotocols; i++) {
        struct reg_protocol *p = &b->protocols[i];
        free(p->name);
        free(p->transport);
        free(p->description);
        for (size_t j = 0; j < p->nactions; j++) {
            free(p->actions[j].name);
            free(p->actions[j].description);
        }
        free(p->actions);
    }
    free(b->protocols);
    model_strlist_clear(&b->spawns);
    free(b->binary.s);
    model_strlist_clear(&b->aliases);
    memset(b, 0, sizeof(*b));
}

static void api_clear(struct reg_api *a)
{
    free(a->api);
    free(a->host);
    model_glob_free(a->host_glob);
    free(a->credential_type);
    free(a->description);
    for (size_t i = 0; i < a->nactions; i++) {
        struct api_action *x = &a->actions[i];
        free(x->method);
        free(x->path);
        model_glob_free(x->path_glob);
        free(x->action);
        free(x->risk);
        free(x->description);
    }
    free(a->actions);
    memset(a, 0, sizeof(*a));
}

void model_registry_free(struct model_registry *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->nbins; i++) {
        binary_clear(&r->bins[i]);
    }
    free(r->bins);
    for (size_t i = 0; i < r->nentries; i++) {
        model_glob_free(r->entries[i].glob);
    }
    free(r->entries);
    for (size_t i = 0; i < r->napis; i++) {
        api_clear(&r->apis[i]);
    }
    free(r->apis);
    free(r);
}

/* ===========================================================================
 * Binary descriptors
 * ========================================================================= */

static void f_action_type(struct model_walk *w, const struct model_field *f,
                          const struct model_node *key, const struct model_node *v, void *obj)
{
    static const char *const types[] = {"read", "write", "destructive", NULL};
    int t = model_node_is_string(v) ? model_node_key_index(v, types) : -1;

    (void)f;
    (void)key;
    if (t < 0) {
        model_walk_err(w, v->mark, "field 'type' must be read, write or destructive");
        return;
    }
    ((struct reg_action *)obj)->type = (enum action_type)t;
}

static const struct model_field action_fields[] = {
    {"name", model_field_cstr, offsetof(struct reg_action, name)},
    {"type", f_action_type, 0},
    {"description", model_field_cstr, offsetof(struct reg_action, description)},
};

static void walk_action(struct model_walk *w, const struct model_node *n, struct reg_action *a)
{
    if (n->kind != MODEL_NODE_MAP) {
        model_walk_err(w, n->mark, "protocol action must be a mapping");
        return;
    }
    a->type = ACTION_READ;
    (void)model_walk_map(w, n, "protocol action", action_fields, PV_ARRAY_LEN(action_fields), a);
    if (a->name == NULL || a->name[0] == '\0') {
        model_walk_err(w, n->mark, "action name is required");
    }
}

static void f_protocol_actions(struct model_walk *w, const struct model_field *f,
                               const struct model_node *key, const struct model_node *v, void *obj)
{
    struct reg_protocol *p = obj;
    size_t n;
    struct reg_action *a = model_walk_items(w, f, v, sizeof(*a), p->actions != NULL, &n);

    (void)key;
    if (a == NULL) {
        return;
    }
    p->actions = a;
    p->nactions = n;
    for (size_t i = 0; i < n; i++) {
        walk_action(w, v->items[i], &a[i]);
    }
}

static const struct model_field protocol_fields[] = {
    {"name", model_field_cstr, offsetof(struct reg_protocol, name)},
    {"transport", model_field_cstr, offsetof(struct reg_protocol, transport)},
    {"description", model_field_cstr, offsetof(struct reg_protocol, description)},
    {"bypasses_l7", model_field_bool, offsetof(struct reg_protocol, bypasses_l7)},
    {"actions", f_protocol_actions, 0},
};

static void walk_protocol(struct model_walk *w, const struct model_node *n, struct reg_protocol *p)
{
    if (n->kind != MODEL_NODE_MAP) {
        model_walk_err(w, n->mark, "protocol must be a mapping");
        return;
    }
    (void)model_walk_map(w, n, "protocol", protocol_fields, PV_ARRAY_LEN(protocol_fields), p);
    if (p->name == NULL || p->name[0] == '\0') {
        model_walk_err(w, n->mark, "protocol name is required");
    }
}

static void f_protocols(struct model_walk *w, const struct model_field *f,
                        const struct model_node *key, const struct model_node *v, void *obj)
{
    struct reg_binary *b = obj;
    size_t n;
    struct reg_protocol *p = model_walk_items(w, f, v, sizeof(*p), b->protocols != NULL, &n);

    (void)key;
    if (p == NULL) {
        return;
    }
    b->protocols = p;
    b->nprotocols = n;
    for (size_t i = 0; i < n; i++) {
        walk_protocol(w, v->items[i], &b->protocols[i]);
        b->bypasses_l7 = b->bypasses_l7 || b->protocols[i].bypasses_l7;
    }
}

/* binary: the path; its mark is kept even for a null value, where the
 * "required" message then points */
static void f_binary(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    ((struct reg_binary *)obj)->binary.mark = v->mark;
    model_field_sval(w, f, key, v, obj);
}

static const struct model_field binary_fields[] = {
    {"binary", f_binary, offsetof(struct reg_binary, binary)},
    {"aliases", model_field_strlist, offsetof(struct reg_binary, aliases)},
    {"description", model_field_cstr, offsetof(struct reg_binary, description)},
    {"protocols", f_protocols, 0},
    {"can_exfiltrate", model_field_bool, offsetof(struct reg_binary, can_exfiltrate)},
    {"exfil_mechanism", model_field_cstr, offsetof(struct reg_binary, exfil_mechanism)},
    {"can_construct_http", model_field_bool, offsetof(struct reg_binary, can_construct_http)},
    {"spawns", model_field_strlist, offsetof(struct reg_binary, spawns)},
};

static void walk_binary(struct model_walk *w, const struct model_node *root, struct reg_binary *b)
{
    if (root->kind != MODEL_NODE_MAP) {
        model_walk_err(w, root->mark, "binary descriptor must be a mapping");
        return;
    }
    (void)model_walk_map(w, root, "binary descriptor", binary_fields, PV_ARRAY_LEN(binary_fields),
                         b);
    if (b->binary.s == NULL || b->binary.s[0] == '\0') {
        model_walk_err(w, b->binary.mark.line != 0 ? b->binary.mark : root->mark,
                       "binary is required (an absolute path or glob)");
        return;
    }
    /* paths[0] is `binary`, then the aliases. */
    b->paths = pv_calloc(1 + b->aliases.n, sizeof(b->paths[0]));
    b->path_marks = pv_calloc(1 + b->aliases.n, sizeof(b->path_marks[0]));
    if (b->paths == NULL || b->path_marks == NULL) {
        model_walk_nomem(w);
        return;
    }
    b->paths[0] = b->binary.s;
    b->path_marks[0] = b->binary.mark;
    b->binary.s = NULL;
    b->npaths = 1;
    for (size_t i = 0; i < b->aliases.n; i++) {
        b->paths[b->npaths] = b->aliases.v[i].s;
        b->path_marks[b->npaths] = b->aliases.v[i].mark;
        b->aliases.v[i].s = NULL;
        b->npaths++;
    }
    model_strlist_clear(&b->aliases);
}

/* Compile every path of binary 'bi' into registry entries. */
static void add_entries(struct model_walk *w, struct model_registry *r, size_t bi)
{
    struct reg_binary *b = &r->bins[bi];
    struct reg_entry *nv;

    nv = pv_realloc(r->entries, (r->nentries + b->npaths + 1) * sizeof(nv[0]));
    if (nv == NULL) {
        model_walk_nomem(w);
        return;
    }
    r->entries = nv;
    for (size_t i = 0; i < b->npaths; i++) {
        const char *p = b->paths[i];
        const char *why = NULL;
        char shown[96];
        bool dup = false;

        model_node_printable(shown, sizeof(shown), p, strlen(p));
        if (p[0] != '/') {
            model_walk_err(w, b->path_marks[i], "binary path '%s' must be absolute", shown);
            continue;
        }
        for (size_t e = 0; e < r->nentries && !dup; e++) {
            dup = strcmp(model_glob_text(r->entries[e].glob), p) == 0;
        }
        if (dup) {
            model_walk_err(w, b->path_marks[i], "binary path '%s' is already described", shown);
            continue;
        }
        nv[r->nentries].glob = model_glob_compile(MODEL_GLOB_BINARY, p, strlen(p), &why);
        if (nv[r->nentries].glob == NULL) {
            model_walk_err(w, b->path_marks[i], "invalid binary pattern '%s': %s", shown,
                           why != NULL ? why : pv_strerror(pv_errno));
            continue;
        }
        nv[r->nentries].binary = bi;
        r->nentries++;
    }
}

/* ===========================================================================
 * API descriptors
 * ========================================================================= */

static bool method_token(const char *m)
{
    if (m[0] == '\0' || strlen(m) > 32) {
        return false;
    }
    for (; *m != '\0'; m++) {
        if (!((*m >= 'A' && *m <= 'Z') || *m == '_' || *m == '-')) {
            return false;
        }
    }
    return true;
}

static void f_method(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    struct api_action *a = obj;

    model_field_cstr(w, f, key, v, obj);
    if (a->method == NULL) {
        return;
    }
    for (char *p = a->method; *p != '\0'; p++) {
        *p = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
    }
    if (!method_token(a->method)) {
        model_walk_err(w, v->mark, "invalid method");
    }
}

static void f_api_path(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj)
{
    model_field_cstr(w, f, key, v, obj);
    ((struct api_action *)obj)->path_mark = v->mark;
}

static void f_risk(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                   const struct model_node *v, void *obj)
{
    static const char *const risks[] = {"low", "medium", "high", "critical", NULL};

    if (!model_node_is_string(v) || model_node_key_index(v, risks) < 0) {
        model_walk_err(w, v->mark, "risk must be low, medium, high or critical");
        return;
    }
    model_field_cstr(w, f, key, v, obj);
}

static const struct model_field api_action_fields[] = {
    {"method", f_method, offsetof(struct api_action, method)},
    {"path", f_api_path, offsetof(struct api_action, path)},
    {"action", model_field_cstr, offsetof(struct api_action, action)},
    {"risk", f_risk, offsetof(struct api_action, risk)},
    {"description", model_field_cstr, offsetof(struct api_action, description)},
};

static void walk_api_action(struct model_walk *w, const struct model_node *n, struct api_action *a)
{
    size_t before = w->diags->n;
    uint64_t seen;

    if (n->kind != MODEL_NODE_MAP) {
        model_walk_err(w, n->mark, "API action must be a mapping");
        return;
    }
    a->path_mark = n->mark;
    seen =
        model_walk_map(w, n, "API action", api_action_fields, PV_ARRAY_LEN(api_action_fields), a);
    if ((seen & 0xfu) != 0xfu) {
        model_walk_err(w, n->mark, "API action requires method, path, action and risk");
        return;
    }
    if (a->method == NULL || a->path == NULL || a->action == NULL || a->action[0] == '\0' ||
        a->risk == NULL) {
        /* Present but null or empty; an invalid value was reported already. */
        if (w->diags->n == before) {
            model_walk_err(w, n->mark,
                           "API action method, path, action and risk must not be empty");
        }
        return;
    }
    if (a->path[0] != '/') {
        model_walk_err(w, a->path_mark, "API action path must start with '/'");
        return;
    }
    {
        const char *why = NULL;
        a->path_glob = model_glob_compile(MODEL_GLOB_PATH, a->path, strlen(a->path), &why);
        if (a->path_glob == NULL) {
            char shown[96];
            model_node_printable(shown, sizeof(shown), a->path, strlen(a->path));
            model_walk_err(w, a->path_mark, "invalid path pattern '%s': %s", shown,
                           why != NULL ? why : pv_strerror(pv_errno));
        }
    }
}

static void f_api_host(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj)
{
    struct reg_api *a = obj;
    char low[MAX_HOST + 2];
    char canon[MAX_HOST + 2];
    size_t n;
    size_t outl = 0;
    const char *why = NULL;
    struct model_ip ip;

    model_field_cstr(w, f, key, v, obj);
    if (a->host == NULL) {
        if (v->kind == MODEL_NODE_NULL) {
            model_walk_err(w, v->mark, "host is required");
        }
        return;
    }
    n = strlen(a->host);
    if (n > 0 && a->host[n - 1] == '.') {
        n--;
    }
    if (n == 0 || n > MAX_HOST) {
        model_walk_err(w, v->mark, "API host must be a host name or pattern of 1..%u bytes",
                       (unsigned)MAX_HOST);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = a->host[i];
        low[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    low[n] = '\0';
    if (memchr(low, '*', n) == NULL) {
        if (!model_host_normalize(low, n, canon, sizeof(canon), &outl, &a->host_is_ip, &ip)) {
            model_walk_err(w, v->mark, "invalid API host");
            return;
        }
    } else {
        memcpy(canon, low, n + 1);
        outl = n;
    }
    free(a->host);
    a->host = pv_strndup(canon, outl);
    if (a->host == NULL) {
        model_walk_nomem(w);
        return;
    }
    model_glob_free(a->host_glob);
    a->host_glob = model_glob_compile(MODEL_GLOB_HOST, a->host, outl, &why);
    if (a->host_glob == NULL) {
        model_walk_err(w, v->mark, "invalid API host pattern: %s", why != NULL ? why : "?");
    }
}

static void f_api_actions(struct model_walk *w, const struct model_field *f,
                          const struct model_node *key, const struct model_node *v, void *obj)
{
    struct reg_api *a = obj;
    size_t n;
    struct api_action *x = model_walk_items(w, f, v, sizeof(*x), a->actions != NULL, &n);

    (void)key;
    if (x == NULL) {
        return;
    }
    a->actions = x;
    a->nactions = n;
    for (size_t i = 0; i < n; i++) {
        walk_api_action(w, v->items[i], &x[i]);
    }
}

/* bit 1 and 2 of model_walk_map's answer: host and port */
static const struct model_field api_fields[] = {
    {"api", model_field_cstr, offsetof(struct reg_api, api)},
    {"host", f_api_host, offsetof(struct reg_api, host)},
    {"port", f_port, offsetof(struct reg_api, port)},
    {"credential_type", model_field_cstr, offsetof(struct reg_api, credential_type)},
    {"description", model_field_cstr, offsetof(struct reg_api, description)},
    {"actions", f_api_actions, 0},
};

static void walk_api(struct model_walk *w, const struct model_node *root, struct reg_api *a)
{
    uint64_t seen;

    if (root->kind != MODEL_NODE_MAP) {
        model_walk_err(w, root->mark, "API descriptor must be a mapping");
        return;
    }
    seen = model_walk_map(w, root, "API descriptor", api_fields, PV_ARRAY_LEN(api_fields), a);
    if (a->api == NULL || a->api[0] == '\0') {
        model_walk_err(w, root->mark, "api (the API's name) is required");
    }
    if ((seen & 2u) == 0) {
        model_walk_err(w, root->mark, "host is required");
    }
    if ((seen & 4u) == 0) {
        model_walk_err(w, root->mark, "port is required");
    }
}

/* ===========================================================================
 * Loading
 * ========================================================================= */

enum desc_kind { DESC_BINARY, DESC_API };

/* "binaries/git.yaml" -> "git" */
static char *file_stem(const char *name)
{
    const char *base = strrchr(name, '/');
    size_t n;

    base = base != NULL ? base + 1 : name;
    n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".yaml") == 0) {
        n -= 5;
    }
    return pv_strndup(base, n);
}

/* Drop the diagnostics after the first 'n'. */
static void diags_truncate(struct model_diags *d, size_t n)
{
    while (d->n > n) {
        d->n--;
        free(d->v[d->n].file);
        free(d->v[d->n].msg);
        free(d->v[d->n].line);
    }
}

static void load_descriptor(struct model_registry *r, enum desc_kind kind, const char *file,
                            const char *data, size_t len, struct model_diags *diags)
{
    struct model_node_ctx c = {file, diags};
    struct model_walk w = {file, diags, false};
    struct model_node *root;
    size_t before = diags->n;

    if (len > MAX_DESCRIPTOR_BYTES) {
        model_node_report(&c, (struct model_mark){0, 0}, "descriptor is larger than %u bytes",
                          MAX_DESCRIPTOR_BYTES);
        return;
    }
    root = model_yaml_read(file, data, len, diags);
    if (root == NULL) {
        if (diags->n == before) {
            model_node_report(&c, (struct model_mark){0, 0}, "%s", pv_strerror(PV_ERR_PARSE));
        }
        return;
    }
    if (kind == DESC_BINARY) {
        struct reg_binary *nv = pv_realloc(r->bins, (r->nbins + 1) * sizeof(nv[0]));
        if (nv == NULL) {
            model_node_report(&c, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        } else {
            r->bins = nv;
            memset(&nv[r->nbins], 0, sizeof(nv[0]));
            r->nbins++;
            nv[r->nbins - 1].name = file_stem(file);
            if (nv[r->nbins - 1].name == NULL) {
                model_node_report(&c, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            }
            walk_binary(&w, root, &nv[r->nbins - 1]);
            if (diags->n == before) {
                add_entries(&w, r, r->nbins - 1);
            }
        }
    } else {
        struct reg_api *nv = pv_realloc(r->apis, (r->napis + 1) * sizeof(nv[0]));
        if (nv == NULL) {
            model_node_report(&c, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        } else {
            struct reg_api *a = &nv[r->napis];
            r->apis = nv;
            memset(a, 0, sizeof(*a));
            r->napis++;
            walk_api(&w, root, a);
            for (size_t i = 0; i + 1 < r->napis && a->api != NULL; i++) {
                if (r->apis[i].api != NULL && strcmp(r->apis[i].api, a->api) == 0) {
                    char shown[96];
                    model_node_printable(shown, sizeof(shown), a->api, strlen(a->api));
                    model_node_report(&c, root->mark, "duplicate API '%s'", shown);
                    break;
                }
            }
        }
    }
    if (w.nomem) {
        /* A copy that failed leaves a field empty, and the checks then
         * blame the descriptor ("... must not be empty"): the one true
         * message is the memory. */
        diags_truncate(diags, before);
        model_node_report(&c, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        pv_errno = PV_ERR_NOMEM;
    }
    model_node_free(root);
}

struct model_registry *model_registry_embedded(struct model_diags *diags)
{
    struct model_registry *r;
    size_t before;
    bool nomem = false;

    if (diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = diags->n;
    r = pv_calloc(1, sizeof(*r));
    if (r == NULL) {
        return NULL;
    }
    pv_errno = PV_OK;
    for (size_t i = 0; model_embedded_binaries[i].name != NULL; i++) {
        const struct model_embedded_file *f = &model_embedded_binaries[i];
        load_descriptor(r, DESC_BINARY, f->name, f->data, strlen(f->data), diags);
        nomem = nomem || pv_errno == PV_ERR_NOMEM;
    }
    for (size_t i = 0; model_embedded_apis[i].name != NULL; i++) {
        const struct model_embedded_file *f = &model_embedded_apis[i];
        load_descriptor(r, DESC_API, f->name, f->data, strlen(f->data), diags);
        nomem = nomem || pv_errno == PV_ERR_NOMEM;
    }
    if (diags->n != before) {
        model_registry_free(r);
        pv_errno = nomem ? PV_ERR_NOMEM : PV_ERR_POLICY;
        return NULL;
    }
    return r;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load the .yaml files of DIR/SUB in name order; a missing SUB is empty. */
static void load_subdir(struct model_registry *r, const char *dir, const char *sub,
                        enum desc_kind kind, struct model_diags *diags)
{
    struct pv_dynbuf path;
    char **names = NULL;
    size_t n = 0;
    DIR *d;
    struct dirent *de;
    struct model_node_ctx c = {dir, diags};

    pv_dynbuf_init(&path, 8192);
    if (!pv_ok(pv_dynbuf_printf(&path, "%s/%s", dir, sub))) {
        model_node_report(&c, (struct model_mark){0, 0}, "registry path is too long");
        pv_dynbuf_free(&path);
        return;
    }
    d = opendir(path.buf);
    if (d == NULL) {
        if (errno != ENOENT) {
            c.file = path.buf;
            model_node_report(&c, (struct model_mark){0, 0}, "cannot open registry directory: %s",
                              strerror(errno));
        }
        pv_dynbuf_free(&path);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        char **nv;
        if (l <= 5 || strcmp(de->d_name + l - 5, ".yaml") != 0 || de->d_name[0] == '.') {
            continue;
        }
        if (n == MAX_FILES) {
            model_node_report(&c, (struct model_mark){0, 0}, "more than %u registry files in %s",
                              (unsigned)MAX_FILES, sub);
            break;
        }
        nv = pv_realloc(names, (n + 1) * sizeof(nv[0]));
        if (nv == NULL || (nv[n] = pv_strdup(de->d_name)) == NULL) {
            names = nv != NULL ? nv : names;
            model_node_report(&c, (struct model_mark){0, 0}, "%s", pv_strerror(PV_ERR_NOMEM));
            break;
        }
        names = nv;
        n++;
    }
    closedir(d);
    if (n > 1) {
        qsort(names, n, sizeof(names[0]), cmp_str);
    }
    for (size_t i = 0; i < n; i++) {
        struct pv_dynbuf file;
        size_t len = 0;
        char err[512];
        char *data = NULL;

        pv_dynbuf_init(&file, 8192);
        if (!pv_ok(pv_dynbuf_printf(&file, "%s/%s", path.buf, names[i]))) {
            model_node_report(&c, (struct model_mark){0, 0}, "registry path is too long");
            pv_dynbuf_free(&file);
            continue;
        }
        if (!pv_ok(pv_file_read(file.buf, MAX_DESCRIPTOR_BYTES, false, &data, &len, err,
                                sizeof(err)))) {
            struct model_node_ctx fc = {file.buf, diags};
            model_node_report(&fc, (struct model_mark){0, 0}, "cannot read descriptor: %s",
                              pv_file_reason(file.buf, err));
        } else {
            load_descriptor(r, kind, file.buf, data, len, diags);
            free(data);
        }
        pv_dynbuf_free(&file);
    }
    free_strv(names, n);
    pv_dynbuf_free(&path);
}

struct model_registry *model_registry_load_dir(const char *dir, struct model_diags *diags)
{
    struct model_registry *r;
    struct model_node_ctx c = {dir, diags};
    size_t before;
    DIR *d;

    if (dir == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = diags->n;
    d = opendir(dir);
    if (d == NULL) {
        model_node_report(&c, (struct model_mark){0, 0}, "cannot open registry directory: %s",
                          strerror(errno));
        pv_errno = PV_ERR_IO;
        return NULL;
    }
    closedir(d);
    r = pv_calloc(1, sizeof(*r));
    if (r == NULL) {
        return NULL;
    }
    load_subdir(r, dir, "binaries", DESC_BINARY, diags);
    load_subdir(r, dir, "apis", DESC_API, diags);
    if (diags->n != before) {
        model_registry_free(r);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    return r;
}

/* ===========================================================================
 * Accessors
 * ========================================================================= */

static const struct reg_binary *entry_binary(const struct model_registry *r, size_t i)
{
    if (r == NULL || i >= r->nentries) {
        return NULL;
    }
    return &r->bins[r->entries[i].binary];
}

size_t model_registry_nbinaries(const struct model_registry *r)
{
    return r == NULL ? 0 : r->nentries;
}

const struct model_glob *model_registry_binary_glob(const struct model_registry *r, size_t i)
{
    return (r == NULL || i >= r->nentries) ? NULL : r->entries[i].glob;
}

/*= docs/semantics.md#binary-classes
 *# an entry with a protocol that `bypasses_l7` (git, ssh, nc, ...) puts
 *# every matching path in **BypassL7** */
bool model_registry_binary_bypasses_l7(const struct model_registry *r, size_t i)
{
    const struct reg_binary *b = entry_binary(r, i);
    return b != NULL && b->bypasses_l7;
}

const char *model_registry_binary_description(const struct model_registry *r, size_t i)
{
    const struct reg_binary *b = entry_binary(r, i);
    return b == NULL ? NULL : b->description;
}

const char *model_registry_binary_name(const struct model_registry *r, size_t i)
{
    const struct reg_binary *b = entry_binary(r, i);
    return b == NULL ? NULL : b->name;
}

bool model_registry_binary_can_exfiltrate(const struct model_registry *r, size_t i)
{
    const struct reg_binary *b = entry_binary(r, i);
    return b != NULL && b->can_exfiltrate;
}

bool model_registry_binary_can_construct_http(const struct model_registry *r, size_t i)
{
    const struct reg_binary *b = entry_binary(r, i);
    return b != NULL && b->can_construct_http;
}

size_t model_registry_find_binary(const struct model_registry *r, const char *path)
{
    if (r == NULL || path == NULL) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < r->nentries; i++) {
        if (model_glob_match(r->entries[i].glob, path, strlen(path))) {
            return i;
        }
    }
    return SIZE_MAX;
}

size_t model_registry_napis(const struct model_registry *r)
{
    return r == NULL ? 0 : r->napis;
}

const char *model_registry_api_name(const struct model_registry *r, size_t i)
{
    return (r == NULL || i >= r->napis) ? NULL : r->apis[i].api;
}

const char *model_registry_api_host(const struct model_registry *r, size_t i)
{
    return (r == NULL || i >= r->napis) ? NULL : r->apis[i].host;
}

uint16_t model_registry_api_port(const struct model_registry *r, size_t i)
{
    return (r == NULL || i >= r->napis) ? 0 : r->apis[i].port;
}

const char *model_registry_api_credential_type(const struct model_registry *r, size_t i)
{
    return (r == NULL || i >= r->napis) ? NULL : r->apis[i].credential_type;
}

size_t model_registry_api_for_host(const struct model_registry *r, const char *host)
{
    char norm[MAX_HOST + 2];
    size_t n;

    if (r == NULL || host == NULL) {
        return SIZE_MAX;
    }
    n = strlen(host);
    while (n > 0 && host[n - 1] == '.') {
        n--;
    }
    if (n > MAX_HOST) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = host[i];
        norm[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    norm[n] = '\0';
    for (size_t i = 0; i < r->napis; i++) {
        if (strcmp(r->apis[i].host, norm) == 0) {
            return i;
        }
    }
    for (size_t i = 0; i < r->napis; i++) {
        if (model_host_patterns_overlap(r->apis[i].host, norm)) {
            return i;
        }
    }
    return SIZE_MAX;
}

static bool api_host_matches(const struct reg_api *a, const char *host, size_t len, bool is_ip)
{
    if (a->host_glob == NULL) {
        return false;
    }
    /* Wildcards match DNS names only (docs/semantics.md#host-pattern). */
    if (is_ip && !model_glob_is_literal(a->host_glob)) {
        return false;
    }
    return model_glob_match(a->host_glob, host, len);
}

bool model_registry_api_action(const struct model_registry *r, const char *host, uint16_t port,
                               const char *method, const char *path, const char **api,
                               const char **action, const char **risk)
{
    char norm[MAX_HOST + 2];
    char m[33];
    size_t nl = 0;
    size_t ml;
    size_t pl;
    bool is_ip = false;
    struct model_ip ip;

    if (r == NULL || host == NULL || method == NULL || path == NULL) {
        return false;
    }
    if (!model_host_normalize(host, strlen(host), norm, sizeof(norm), &nl, &is_ip, &ip)) {
        return false;
    }
    ml = strlen(method);
    if (ml == 0 || ml >= sizeof(m)) {
        return false;
    }
    for (size_t i = 0; i <= ml; i++) {
        char ch = method[i];
        m[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
    }
    pl = strcspn(path, "?");
    for (size_t i = 0; i < r->napis; i++) {
        const struct reg_api *a = &r->apis[i];
        if (a->port != port || !api_host_matches(a, norm, nl, is_ip)) {
            continue;
        }
        for (size_t j = 0; j < a->nactions; j++) {
            const struct api_action *x = &a->actions[j];
            /* A GET entry also names HEAD (docs/semantics.md#methods). */
            bool mok = strcmp(x->method, m) == 0 ||
                       (strcmp(x->method, "GET") == 0 && strcmp(m, "HEAD") == 0);
            if (!mok || x->path_glob == NULL || !model_glob_match(x->path_glob, path, pl)) {
                continue;
            }
            if (api != NULL) {
                *api = a->api;
            }
            if (action != NULL) {
                *action = x->action;
            }
            if (risk != NULL) {
                *risk = x->risk;
            }
            return true;
        }
    }
    return false;
}
