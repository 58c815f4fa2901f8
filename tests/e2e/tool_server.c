/* SPDX-License-Identifier: Apache-2.0 */
/* tool_server.c - a host-side tool server in C for the e2e tests of
 * `proviso run` and tool discovery (libmicrohttpd)
 *
 *   tool_server --port P --token-file F [--log FILE]
 *
 * The uniform process contract (docs/advisor.md#tools): listens on
 * 127.0.0.1:P; GET /healthz answers 200; GET /openapi.json describes the
 * operations below; every operation needs "Authorization: Bearer TOKEN"
 * (the token file's content) and appends "METHOD PATH" to --log, so a test
 * can tell what reached it; SIGTERM stops it with status 0.
 *
 *   GET    /items           list
 *   GET    /items/{id}      one item
 *   POST   /items           create
 *   DELETE /items/{id}      delete
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char openapi[] =
    "{\"openapi\":\"3.0.3\",\"info\":{\"title\":\"items\",\"version\":\"1\"},"
    "\"servers\":[{\"url\":\"http://127.0.0.1\"}],\"paths\":{"
    "\"/items\":{\"get\":{\"operationId\":\"list_items\",\"summary\":\"List items\"},"
    "\"post\":{\"operationId\":\"create_item\",\"summary\":\"Create an item\","
    "\"requestBody\":{\"content\":{\"application/json\":{\"schema\":{\"type\":\"object\"}}}}}},"
    "\"/items/{id}\":{\"parameters\":[{\"name\":\"id\",\"in\":\"path\",\"required\":true,"
    "\"schema\":{\"type\":\"string\"}}],"
    "\"get\":{\"operationId\":\"get_item\",\"summary\":\"Get one item\"},"
    "\"delete\":{\"operationId\":\"delete_item\",\"summary\":\"Delete an item\"}}}}";

static char token[256];
static FILE *req_log;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                                             MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **state)
{
    const char *auth;
    char want[300];
    static int first;

    (void)cls;
    (void)version;
    (void)data;
    if (*state == NULL) {
        *state = &first; /* headers first; the body (if any) comes next */
        return MHD_YES;
    }
    if (*size > 0) {
        *size = 0; /* the body is not used */
        return MHD_YES;
    }
    if (strcmp(method, "GET") == 0 && strcmp(url, "/healthz") == 0) {
        return reply(c, 200, "{\"ok\":true}");
    }
    if (strcmp(method, "GET") == 0 && strcmp(url, "/openapi.json") == 0) {
        return reply(c, 200, openapi);
    }
    auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    snprintf(want, sizeof(want), "Bearer %s", token);
    if (auth == NULL || strcmp(auth, want) != 0) {
        return reply(c, 401, "{\"error\":\"unauthorized\"}");
    }
    if (req_log != NULL) {
        fprintf(req_log, "%s %s\n", method, url);
        fflush(req_log);
    }
    if (strcmp(url, "/items") == 0 && (strcmp(method, "GET") == 0 || strcmp(method, "POST") == 0)) {
        return reply(c, 200, "{\"items\":[]}");
    }
    if (strncmp(url, "/items/", 7) == 0 && url[7] != '\0' && strchr(url + 7, '/') == NULL &&
        (strcmp(method, "GET") == 0 || strcmp(method, "DELETE") == 0)) {
        return reply(c, 200, "{\"item\":true}");
    }
    return reply(c, 404, "{\"error\":\"not_found\"}");
}

int main(int argc, char **argv)
{
    unsigned port = 0;
    const char *tf = NULL;
    struct MHD_Daemon *d;
    struct sigaction sa;
    FILE *f;
    size_t n;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) {
            port = (unsigned)strtoul(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--token-file") == 0) {
            tf = argv[i + 1];
        } else if (strcmp(argv[i], "--log") == 0) {
            req_log = fopen(argv[i + 1], "a");
        } else {
            fprintf(stderr, "tool_server: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    f = tf != NULL ? fopen(tf, "r") : NULL;
    if (port == 0 || port > 65535 || f == NULL) {
        fprintf(stderr, "usage: tool_server --port P --token-file F [--log FILE]\n");
        return 2;
    }
    n = fread(token, 1, sizeof(token) - 1, f);
    fclose(f);
    while (n > 0 && (token[n - 1] == '\n' || token[n - 1] == ' ')) {
        n--;
    }
    token[n] = '\0';
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    {
        struct sockaddr_in sin;
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_port = htons((uint16_t)port);
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, handle,
                             NULL, MHD_OPTION_SOCK_ADDR, &sin, MHD_OPTION_END);
    }
    if (d == NULL) {
        fprintf(stderr, "tool_server: cannot listen on 127.0.0.1:%u\n", port);
        return 1;
    }
    while (!stop) {
        pause();
    }
    MHD_stop_daemon(d);
    return 0;
}
