# bench: evaluator throughput (built by `make`, run by hand, not by `make check`)
#   ./tests/bench/bench_eval [seconds-per-measurement]
noinst_PROGRAMS += tests/bench/bench_eval
tests_bench_bench_eval_SOURCES = tests/bench/bench_eval.c
tests_bench_bench_eval_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_eval_LDADD = $(MODEL_LIBS)
# proviso-prover over HTTP (owner: server): wrk against 127.0.0.1, run by hand
#   tests/bench/bench_server.sh [seconds]   (from the build directory)
noinst_PROGRAMS += tests/bench/bench_server
tests_bench_bench_server_SOURCES = tests/bench/bench_server.c
tests_bench_bench_server_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_bench_bench_server_LDADD = $(SERVER_LIBS)
EXTRA_DIST += tests/bench/bench_server.sh
# proviso-proxy (owner: proxy): direct vs tinyproxy vs proviso-proxy, run by hand
#   tests/bench/bench_proxy.sh [seconds]   (from the build directory, after make check)
noinst_PROGRAMS += tests/bench/bench_proxy_conns
tests_bench_bench_proxy_conns_SOURCES = tests/bench/bench_proxy_conns.c
tests_bench_bench_proxy_conns_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_proxy_conns_LDADD = common/libcommon.la
EXTRA_DIST += tests/bench/bench_proxy.sh tests/bench/bench_sandbox.sh
# prover latency (owner: prover), run by hand:
#   ./tests/bench/bench_prove [iterations-at-100-rules] [timeout-ms]
noinst_PROGRAMS += tests/bench/bench_prove
tests_bench_bench_prove_SOURCES = tests/bench/bench_prove.c tests/bench/bench_policy.h
tests_bench_bench_prove_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_prove_LDADD = $(PROVER_LIBS)
# the whole advisor loop (owner: advisor): denied request -> proposal ->
# prove -> auto-approve -> proxy reload -> retried request, per phase; by hand
#   tests/bench/bench_loop.sh [iterations]   (from the build directory)
EXTRA_DIST += tests/bench/bench_loop.sh tests/bench/bench_loop.py
# the audit chain (owner: audit), run by hand: seal cost and verify rate
#   ./tests/bench/bench_audit [records]
noinst_PROGRAMS += tests/bench/bench_audit
tests_bench_bench_audit_SOURCES = tests/bench/bench_audit.c
tests_bench_bench_audit_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_bench_bench_audit_LDADD = $(AUDIT_LIBS)
EXTRA_DIST += tests/bench/bench_audit.sh
EXTRA_DIST += tests/bench/mapper_replay.sh tests/data/denials-recorded.json
# GraphQL decisions (owner: model): parse + decide per request against a
# REST decision in the same run, by hand
#   ./tests/bench/bench_graphql [seconds-per-measurement]
noinst_PROGRAMS += tests/bench/bench_graphql
tests_bench_bench_graphql_SOURCES = tests/bench/bench_graphql.c
tests_bench_bench_graphql_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_graphql_LDADD = $(MODEL_LIBS)
# the proxy's cost per WebSocket text message (parse, decide, re-frame) against
# a REST request decision in the same run (owner: proxy), run by hand:
#   ./tests/bench/bench_ws [seconds]
noinst_PROGRAMS += tests/bench/bench_ws
tests_bench_bench_ws_SOURCES = tests/bench/bench_ws.c
tests_bench_bench_ws_CFLAGS = $(PROXY_CFLAGS)
tests_bench_bench_ws_LDADD = $(PROXY_LIBS)
# the advisor's submissions and its stores: SQLite, PostgreSQL with one and
# two replicas (owner: advisor); by hand
#   tests/bench/bench_advisor.sh [seconds]   (from the build directory)
EXTRA_DIST += tests/bench/bench_advisor.sh

# JSON-RPC / MCP decisions against a REST decision (docs/proxy.md#rpc):
#   ./tests/bench/bench_rpc [seconds-per-measurement]
noinst_PROGRAMS += tests/bench/bench_rpc
tests_bench_bench_rpc_SOURCES = tests/bench/bench_rpc.c
tests_bench_bench_rpc_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_rpc_LDADD = $(MODEL_LIBS)
