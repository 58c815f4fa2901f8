# proxy advisor-mode tests: the Check unit test of policy.local's pure parts
# (redaction, query numbers, the log tap, deny-body advice, the skill) and the
# end-to-end loop with real processes (advisor + prover + proxy + upstream +
# curl on 127.0.0.1; needs jq).
check_PROGRAMS += tests/check_proxy_local
TESTS += tests/check_proxy_local
tests_check_proxy_local_SOURCES = tests/check_proxy_local.c
tests_check_proxy_local_CFLAGS = $(PROXY_TEST_CFLAGS)
tests_check_proxy_local_LDADD = $(PROXY_TEST_LIBS)

PROXY_ADVISOR_E2E = tests/e2e/advisor_loop.sh tests/e2e/advisor_mapper.sh tests/e2e/advisor_reproof.sh \
	tests/e2e/advisor_peers.sh tests/e2e/advisor_tools.sh tests/e2e/advisor_graphql.sh \
	tests/e2e/advisor_mcp.sh \
	tests/e2e/proxy_unbacked.sh
EXTRA_DIST += tests/e2e/advisor_mitm.py
# tool discovery's host-side servers: one in C, one in Python
check_PROGRAMS += tests/e2e/tool_server
tests_e2e_tool_server_SOURCES = tests/e2e/tool_server.c
tests_e2e_tool_server_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS)
tests_e2e_tool_server_LDADD = $(MHD_LIBS)
EXTRA_DIST += tests/e2e/tool_server.py
EXTRA_DIST += tests/e2e/advisor_proxy_lib.sh
TESTS += $(PROXY_ADVISOR_E2E)
EXTRA_DIST += $(PROXY_ADVISOR_E2E)
# --advisor repeated: failover between two advisor replicas on one
# PostgreSQL (tests/pg_lib.sh; skips without the server)
TESTS += tests/e2e/proxy_failover.sh
EXTRA_DIST += tests/e2e/proxy_failover.sh
