/* SPDX-License-Identifier: Apache-2.0 */
/* check_httpd_shell.c - the service shell shared by the prover and the
 * advisor (httpd_shell.c, httpd_metrics.c, httpd_pool.c): embedded
 * documents, the token source order, /healthz, the request metrics and the
 * worker pool's per-thread state.
 *
 * The metrics cases are the ones a sloppy table gets wrong: an id outside
 * the route table, statuses outside 100..599, two routes sharing an id,
 * a latency exactly on a bucket bound, and the raw text staying valid.
 * The pool's case is a thread whose state could not be made at its start
 * (out of memory, a store that was down): it must make it again before its
 * next job, not answer every job of its life with that one failure.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "httpd/httpd.h"

#define TOK_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TOK_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

START_TEST(test_doc_parse)
{
    static const char ok[] = "{\"openapi\": \"3.0.3\", \"paths\": {}}";
    static const char dup[] = "{\"paths\": {}, \"paths\": {\"/x\": {}}}";
    static const char trailing[] = "{\"a\": 1} {\"b\": 2}";
    static const char cut[] = "{\"a\": [1, 2";
    json_t *d = httpd_doc_parse(ok, sizeof(ok) - 1);

    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(json_string_value(json_object_get(d, "openapi")), "3.0.3");
    json_decref(d);
    ck_assert_ptr_null(httpd_doc_parse(dup, sizeof(dup) - 1));
    ck_assert_ptr_null(httpd_doc_parse(trailing, sizeof(trailing) - 1));
    ck_assert_ptr_null(httpd_doc_parse(cut, sizeof(cut) - 1));
    ck_assert_ptr_null(httpd_doc_parse("", 0));
}
END_TEST

START_TEST(test_healthz)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    httpd_reply_healthz(&r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(r.content_type, "application/json");
    ck_assert_uint_eq(r.raw_len, strlen("{\"status\":\"ok\"}\n"));
    ck_assert_int_eq(memcmp(r.raw_static, "{\"status\":\"ok\"}\n", r.raw_len), 0);
    ck_assert_ptr_null(r.body);
    ck_assert_ptr_null(r.raw);
}
END_TEST

static int pipe_with(const char *text)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

START_TEST(test_token_order)
{
    char dir[] = "/tmp/pv-shell-XXXXXX";
    char path[64];
    char err[256];
    struct httpd_token t;
    struct stat st;
    FILE *f;
    int fd;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/tok", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(TOK_A "\n", f);
    fclose(f);

    /* the file wins over a descriptor */
    fd = pipe_with(TOK_B);
    ck_assert(pv_ok(httpd_token_load(&t, path, fd, dir, err, sizeof(err))));
    ck_assert_uint_eq(t.len, strlen(TOK_A));
    ck_assert_int_eq(memcmp(t.buf, TOK_A, t.len), 0);
    ck_assert_ptr_null(t.generated_path);
    httpd_token_free(&t);
    close(fd);

    /* then the descriptor */
    fd = pipe_with(TOK_B);
    ck_assert(pv_ok(httpd_token_load(&t, NULL, fd, dir, err, sizeof(err))));
    ck_assert_int_eq(memcmp(t.buf, TOK_B, t.len), 0);
    ck_assert_ptr_null(t.generated_path);
    httpd_token_free(&t);

    /* then a generated 0600 file in the given directory */
    ck_assert(pv_ok(httpd_token_load(&t, NULL, -1, dir, err, sizeof(err))));
    ck_assert_ptr_nonnull(t.generated_path);
    ck_assert_int_eq(strncmp(t.generated_path, dir, strlen(dir)), 0);
    ck_assert_int_eq(stat(t.generated_path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777u, 0600u);
    httpd_token_free(&t);

    /* a missing file is an error, not a fallback to generation */
    snprintf(path, sizeof(path), "%s/none", dir);
    ck_assert(!pv_ok(httpd_token_load(&t, path, -1, dir, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "none"));

    snprintf(path, sizeof(path), "%s/tok", dir);
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0); /* nothing else was left behind */
}
END_TEST

static const struct httpd_route routes[] = {
    {"GET", "/healthz", 1, HTTPD_PUBLIC},
    {"GET", "/ui", 7, HTTPD_PUBLIC},
    {"GET", "/", 7, HTTPD_PUBLIC},
    {"POST", "/v1/x/*", 3, HTTPD_BODY},
};

static unsigned long long sample(const char *text, const char *series)
{
    const char *p = text;
    size_t n = strlen(series);

    while ((p = strstr(p, series)) != NULL) {
        if ((p == text || p[-1] == '\n') && p[n] == ' ') {
            return strtoull(p + n + 1, NULL, 10);
        }
        p += n;
    }
    return ~0ull; /* absent */
}

START_TEST(test_metrics)
{
    struct httpd_metrics *m = httpd_metrics_new("t", routes, PV_ARRAY_LEN(routes));
    char *text;
    size_t len = 0;

    ck_assert_ptr_nonnull(m);
    httpd_metrics_request(m, 1, 200, 250000); /* exactly 250 us */
    httpd_metrics_request(m, 1, 200, 251000); /* just above */
    httpd_metrics_request(m, 3, 413, 1000);
    httpd_metrics_request(m, 7, 200, 1000);  /* /ui and / share id 7 */
    httpd_metrics_request(m, 42, 404, 1000); /* not in the table */
    httpd_metrics_request(m, -1, 404, 1000); /* no route at all */
    httpd_metrics_request(m, 3, 99, 1000);   /* statuses out of range */
    httpd_metrics_request(m, 3, 600, 1000);
    httpd_metrics_rejected(m);
    httpd_metrics_rejected(m);
    text = httpd_metrics_render(m, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), len);

    ck_assert_uint_eq(sample(text, "t_requests_total{method=\"GET\",route=\"/healthz\","
                                   "status=\"200\"}"),
                      2);
    ck_assert_uint_eq(sample(text, "t_requests_total{method=\"POST\",route=\"/v1/x/*\","
                                   "status=\"413\"}"),
                      1);
    ck_assert_uint_eq(sample(text, "t_requests_total{method=\"GET\",route=\"/ui\","
                                   "status=\"200\"}"),
                      1);
    ck_assert_ptr_null(strstr(text, "route=\"/\""));
    ck_assert_uint_eq(sample(text, "t_requests_total{method=\"\",route=\"unknown\","
                                   "status=\"404\"}"),
                      2);
    ck_assert_ptr_null(strstr(text, "status=\"99\""));
    ck_assert_ptr_null(strstr(text, "status=\"600\""));
    /* the histogram still counts the out-of-range replies */
    ck_assert_uint_eq(sample(text, "t_request_duration_seconds_count{method=\"POST\","
                                   "route=\"/v1/x/*\"}"),
                      3);
    ck_assert_uint_eq(sample(text, "t_request_duration_seconds_bucket{method=\"GET\","
                                   "route=\"/healthz\",le=\"0.000250\"}"),
                      1);
    ck_assert_uint_eq(sample(text, "t_request_duration_seconds_bucket{method=\"GET\","
                                   "route=\"/healthz\",le=\"0.000500\"}"),
                      2);
    ck_assert_ptr_nonnull(strstr(text, "t_request_duration_seconds_sum{method=\"GET\","
                                       "route=\"/healthz\"} 0.000501000\n"));
    ck_assert_uint_eq(sample(text, "t_rejected_total"), 2);
    ck_assert_int_eq(text[len - 1], '\n');
    free(text);
    httpd_metrics_free(m);
}
END_TEST

START_TEST(test_metrics_empty)
{
    struct httpd_metrics *m = httpd_metrics_new("t", routes, 0);
    char *text;
    size_t len = 0;

    ck_assert_ptr_nonnull(m);
    httpd_metrics_request(m, 1, 200, 5); /* every id is unknown */
    text = httpd_metrics_render(m, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(sample(text, "t_requests_total{method=\"\",route=\"unknown\","
                                   "status=\"200\"}"),
                      1);
    ck_assert_uint_eq(sample(text, "t_rejected_total"), 0);
    free(text);
    httpd_metrics_free(m);
    httpd_metrics_free(NULL);
}
END_TEST

/* The worker pool: worker_new fails its first 'fail' calls; each job
 * records the state it ran with. */
struct pool_probe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned fail;
    unsigned made; /* worker_new calls */
    unsigned ran;  /* jobs run */
};

struct probe_job {
    struct httpd_job job; /* first member: the pool hands it back */
    struct pool_probe *p;
    void *state;
    bool done;
};

static void *probe_new(void *arg)
{
    struct pool_probe *p = arg;
    bool fail;

    pthread_mutex_lock(&p->mu);
    fail = p->made++ < p->fail;
    pthread_mutex_unlock(&p->mu);
    return fail ? NULL : malloc(1);
}

static void probe_free(void *state)
{
    free(state);
}

static void probe_run(struct httpd_job *job, void *worker, bool cancelled)
{
    struct probe_job *j = (struct probe_job *)job;

    (void)cancelled;
    pthread_mutex_lock(&j->p->mu);
    j->state = worker;
    j->done = true;
    j->p->ran++;
    pthread_cond_broadcast(&j->p->cv);
    pthread_mutex_unlock(&j->p->mu);
}

/* Submit 'j' to the one-thread pool and wait until it ran. */
static void *probe_submit(struct httpd_pool *pool, struct pool_probe *p, struct probe_job *j)
{
    memset(j, 0, sizeof(*j));
    j->job.run = probe_run;
    j->p = p;
    ck_assert(httpd_pool_submit(pool, &j->job, 4));
    pthread_mutex_lock(&p->mu);
    while (!j->done) {
        pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return j->state;
}

static void probe_init(struct pool_probe *p, unsigned fail)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->fail = fail;
}

/* A state that failed at the thread's start is made before its first job,
 * and kept for the jobs after it (server_fail_alloc.sh's 'never another
 * answer' at N=4299-4301: a prover session that failed at a worker's start
 * answered 500 'prover session unavailable' for the process's life). */
START_TEST(test_pool_state_failed_at_start)
{
    struct pool_probe p;
    struct probe_job j1;
    struct probe_job j2;
    struct httpd_pool *pool;
    void *first;

    probe_init(&p, 1);
    pool = httpd_pool_new(1, probe_new, probe_free, &p);
    ck_assert_ptr_nonnull(pool);
    first = probe_submit(pool, &p, &j1);
    ck_assert_msg(first != NULL, "the job ran with the state that failed at the thread's start");
    ck_assert_ptr_eq(probe_submit(pool, &p, &j2), first); /* made once, then kept */
    ck_assert_uint_eq(p.made, 2);
    httpd_pool_free(pool);
    ck_assert_uint_eq(p.ran, 2);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
}
END_TEST

/* A state that fails again when a job comes: that job runs with NULL (its
 * caller answers 500), and the next job tries once more. */
START_TEST(test_pool_state_retried_per_job)
{
    struct pool_probe p;
    struct probe_job j;
    struct httpd_pool *pool;

    probe_init(&p, 2);
    pool = httpd_pool_new(1, probe_new, probe_free, &p);
    ck_assert_ptr_nonnull(pool);
    ck_assert_ptr_null(probe_submit(pool, &p, &j));
    ck_assert_ptr_nonnull(probe_submit(pool, &p, &j));
    ck_assert_uint_eq(p.made, 3);
    httpd_pool_free(pool);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("httpd_shell");
    TCase *tc = tcase_create("shell");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_doc_parse);
    tcase_add_test(tc, test_healthz);
    tcase_add_test(tc, test_token_order);
    tcase_add_test(tc, test_metrics);
    tcase_add_test(tc, test_metrics_empty);
    tcase_add_test(tc, test_pool_state_failed_at_start);
    tcase_add_test(tc, test_pool_state_retried_per_job);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
