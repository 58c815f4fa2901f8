# proxy tests: Check unit tests of proxy/, the e2e helper programs and the
# end-to-end scripts (real proxy, upstream, curl and wget on 127.0.0.1).
PROXY_TEST_CFLAGS = $(TEST_CFLAGS) $(OPENSSL_CFLAGS) $(LIBEVENT_CFLAGS)
PROXY_TEST_LIBS = $(PROXY_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/check_proxy_http
TESTS += tests/check_proxy_http
tests_check_proxy_http_SOURCES = tests/check_proxy_http.c
tests_check_proxy_http_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_http_LDADD = $(PROXY_TEST_LIBS)

check_PROGRAMS += tests/check_proxy_policy
TESTS += tests/check_proxy_policy
tests_check_proxy_policy_SOURCES = tests/check_proxy_policy.c
tests_check_proxy_policy_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_policy_LDADD = $(PROXY_TEST_LIBS)

check_PROGRAMS += tests/check_proxy_outcome
TESTS += tests/check_proxy_outcome
tests_check_proxy_outcome_SOURCES = tests/check_proxy_outcome.c
tests_check_proxy_outcome_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_outcome_LDADD = $(PROXY_TEST_LIBS)

check_PROGRAMS += tests/check_proxy_ws
TESTS += tests/check_proxy_ws
tests_check_proxy_ws_SOURCES = tests/check_proxy_ws.c
tests_check_proxy_ws_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_ws_LDADD = $(PROXY_TEST_LIBS)

check_PROGRAMS += tests/check_proxy_ident
TESTS += tests/check_proxy_ident
tests_check_proxy_ident_SOURCES = tests/check_proxy_ident.c
tests_check_proxy_ident_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_ident_LDADD = $(PROXY_TEST_LIBS)

# helpers for the e2e scripts (built by make check, not tests themselves)
check_PROGRAMS += tests/e2e/proxy_upstream tests/e2e/proxy_diff tests/e2e/proxy_rawc \
	tests/e2e/proxy_framing
tests_e2e_proxy_rawc_SOURCES = tests/e2e/proxy_rawc.c
tests_e2e_proxy_rawc_LDADD = $(PTHREAD_LIBS)
tests_e2e_proxy_framing_SOURCES = tests/e2e/proxy_framing.c
tests_e2e_proxy_upstream_SOURCES = tests/e2e/proxy_upstream.c
tests_e2e_proxy_upstream_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_e2e_proxy_upstream_LDADD = common/libcommon.la $(OPENSSL_LIBS) $(LIBEVENT_LIBS)
tests_e2e_proxy_diff_SOURCES = tests/e2e/proxy_diff.c
tests_e2e_proxy_diff_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_e2e_proxy_diff_LDADD = $(MODEL_LIBS)

PROXY_E2E = tests/e2e/proxy_forward.sh tests/e2e/proxy_connect.sh \
	tests/e2e/proxy_identity.sh tests/e2e/proxy_ssrf.sh tests/e2e/proxy_tls.sh \
	tests/e2e/proxy_reload.sh tests/e2e/proxy_diff.sh tests/e2e/proxy_smuggle.sh \
	tests/e2e/proxy_flood.sh tests/e2e/proxy_framing.sh tests/e2e/proxy_ops.sh \
	tests/e2e/proxy_graphql.sh tests/e2e/proxy_websocket.sh tests/e2e/proxy_attacks_ws_cred.sh \
	tests/e2e/proxy_rpc.sh
TESTS += $(PROXY_E2E)
# proviso sandbox run (docs/sandbox.md): root only, skipped otherwise
TESTS += tests/e2e/sandbox.sh tests/e2e/sandbox_advisor.sh tests/e2e/sandbox_clients.sh \
	tests/e2e/sandbox_identity.sh
EXTRA_DIST += tests/e2e/sandbox.sh tests/e2e/sandbox_escape.py tests/e2e/sandbox_advisor.sh \
	tests/e2e/sandbox_clients.sh tests/e2e/sandbox_identity.sh
EXTRA_DIST += $(PROXY_E2E) tests/e2e/proxy_lib.sh tests/e2e/gql_upstream.py tests/e2e/rpc_upstream.py tests/e2e/ws_echo.py \
	tests/e2e/ws_client.py tests/e2e/ws_attack.py
# real MCP and JSON-RPC clients and servers through the proxy: the npm
# packages pinned in tests/mcp/package-lock.json (./bootstrap runs npm ci
# there; tests/mcp/node_modules is never distributed, and the script skips
# without it) and Python requests
TESTS += tests/e2e/mcp_clients.sh
EXTRA_DIST += tests/e2e/mcp_clients.sh tests/mcp/package.json tests/mcp/package-lock.json \
	tests/mcp/client.mjs tests/mcp/conformance_client.mjs tests/mcp/everything.mjs \
	tests/mcp/loopback.mjs tests/mcp/rpc_requests.py

# credential placeholders (proxy_cred.c): the rewriter's tables and the e2e
# scenario judged by a logging upstream
check_PROGRAMS += tests/check_proxy_cred
TESTS += tests/check_proxy_cred tests/e2e/proxy_cred.sh tests/cli_cred_store.sh
tests_check_proxy_cred_SOURCES = tests/check_proxy_cred.c
tests_check_proxy_cred_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_cred_LDADD = $(PROXY_TEST_LIBS)
EXTRA_DIST += tests/e2e/proxy_cred.sh tests/cli_cred_store.sh
