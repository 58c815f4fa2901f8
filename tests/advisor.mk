# advisor tests: proviso-advisor (advisor/) and the reviewer CLI that talks to
# it. Unit tests link libadvisor (check_cli_text: only the CLI's pure parts);
# the end-to-end scripts start the real advisor (which runs its own prover
# child) on 127.0.0.1 and need curl and jq.
ADVISOR_TEST_CFLAGS = $(TEST_CFLAGS) $(ADVISOR_CFLAGS)
ADVISOR_TEST_LIBS = $(ADVISOR_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/check_advisor_store tests/check_advisor_rule tests/check_advisor_chunk \
	tests/check_advisor_reproof \
	tests/check_advisor_mapper tests/check_advisor_hold tests/check_advisor_pool \
	tests/check_advisor_listen tests/check_cli_text tests/check_advisor_diff
TESTS += tests/check_advisor_store tests/check_advisor_rule tests/check_advisor_chunk tests/check_cli_text \
	tests/check_advisor_diff \
	tests/check_advisor_reproof \
	tests/check_advisor_mapper tests/check_advisor_hold tests/check_advisor_pool tests/check_advisor_listen
tests_check_advisor_pool_SOURCES = tests/check_advisor_pool.c
tests_check_advisor_pool_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_pool_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_listen_SOURCES = tests/check_advisor_listen.c tests/check_store_util.c \
	tests/check_store_util.h
tests_check_advisor_listen_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_listen_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_hold_SOURCES = tests/check_advisor_hold.c
tests_check_advisor_hold_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_hold_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_store_SOURCES = tests/check_advisor_store.c tests/check_store_util.c \
	tests/check_store_util.h
tests_check_advisor_store_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_store_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_mapper_SOURCES = tests/check_advisor_mapper.c
tests_check_advisor_mapper_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_mapper_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_diff_SOURCES = tests/check_advisor_diff.c
tests_check_advisor_diff_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_diff_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_rule_SOURCES = tests/check_advisor_rule.c
tests_check_advisor_rule_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_rule_LDADD = $(ADVISOR_TEST_LIBS)
# the envelope's clauses on the grants of real proofs: the prover in process
check_PROGRAMS += tests/check_advisor_envelope
TESTS += tests/check_advisor_envelope
tests_check_advisor_envelope_SOURCES = tests/check_advisor_envelope.c
tests_check_advisor_envelope_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_envelope_LDADD = $(ADVISOR_TEST_LIBS) $(PROVER_LIBS)
tests_check_advisor_chunk_SOURCES = tests/check_advisor_chunk.c tests/check_store_util.c \
	tests/check_store_util.h
tests_check_advisor_chunk_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_chunk_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_reproof_SOURCES = tests/check_advisor_reproof.c tests/check_store_util.c \
	tests/check_store_util.h
tests_check_advisor_reproof_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_reproof_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_cli_text_SOURCES = tests/check_cli_text.c cli/cli_http.c cli/cli_chunk.c \
	tests/check_net_util.c tests/check_net_util.h
tests_check_cli_text_CFLAGS = $(TEST_CFLAGS) $(CURL_CFLAGS)
tests_check_cli_text_LDADD = $(HCLIENT_LIBS) $(PROVER_LIBS) $(CURL_LIBS) $(CHECK_LIBS)

ADVISOR_E2E = tests/e2e/advisor_lifecycle.sh tests/e2e/advisor_stress.sh tests/e2e/cli_advisor.sh \
	tests/e2e/advisor_inbox_http.sh tests/e2e/advisor_ui.sh tests/e2e/advisor_peer_ranges.sh \
	tests/e2e/cli_completion.sh tests/e2e/advisor_fail_alloc.sh tests/e2e/advisor_metrics.sh \
	tests/e2e/advisor_fail_alloc_requests.sh
TESTS += $(ADVISOR_E2E)
EXTRA_DIST += $(ADVISOR_E2E) tests/e2e/advisor_lib.sh tests/ui/inbox.mjs
# the prover pool: two real provers, kill -9, restart, and bad "provers"
# and the same through contrib/haproxy/proviso-provers.cfg (skips without haproxy)
TESTS += tests/e2e/advisor_pool.sh tests/e2e/advisor_haproxy.sh
EXTRA_DIST += tests/e2e/advisor_pool.sh tests/e2e/fake_prover.py tests/e2e/advisor_haproxy.sh \
	contrib/haproxy/proviso-provers.cfg
# long-poll budgets under an agent's flood: runs the advisor with a proxy
# (tests/e2e/proxy_lib.sh, advisor_proxy_lib.sh)
ADVISOR_PROXY_E2E = tests/e2e/advisor_longpoll.sh
TESTS += $(ADVISOR_PROXY_E2E)
# the store on PostgreSQL: the unit suites on a throwaway cluster
# (tests/pg_lib.sh), and the advisor on it through kill -9 and a crash
TESTS += tests/advisor_store_pg.sh tests/e2e/advisor_pg.sh tests/e2e/advisor_replicas.sh \
	tests/e2e/replicas_attacks.sh
EXTRA_DIST += tests/advisor_store_pg.sh tests/e2e/advisor_pg.sh tests/pg_lib.sh \
	tests/e2e/advisor_replicas.sh tests/e2e/advisor_replicas_load.py tests/e2e/advisor_burst.py \
	tests/e2e/replicas_attacks.sh
EXTRA_DIST += $(ADVISOR_PROXY_E2E)

# advisor_ui.sh installs playwright-core into tests/ui-node (a cache kept
# across runs; never committed) and leaves its screenshots in
# tests/ui-artifacts: both are in the build tree.
clean-local: clean-local-ui
clean-local-ui:
	-rm -rf tests/ui-artifacts
distclean-local: distclean-local-ui
distclean-local-ui:
	-rm -rf tests/ui-node
.PHONY: clean-local-ui distclean-local-ui
