# advisor tests: proviso-advisor (advisor/). Unit tests link libadvisor; the
# end-to-end scripts start the real binary (which runs its own prover child)
# on 127.0.0.1 and need curl and jq.
ADVISOR_TEST_CFLAGS = $(TEST_CFLAGS) $(ADVISOR_CFLAGS)
ADVISOR_TEST_LIBS = $(ADVISOR_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/check_advisor_store tests/check_advisor_rule
TESTS += tests/check_advisor_store tests/check_advisor_rule
tests_check_advisor_store_SOURCES = tests/check_advisor_store.c
tests_check_advisor_store_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_store_LDADD = $(ADVISOR_TEST_LIBS)
tests_check_advisor_rule_SOURCES = tests/check_advisor_rule.c
tests_check_advisor_rule_CFLAGS = $(ADVISOR_TEST_CFLAGS)
tests_check_advisor_rule_LDADD = $(ADVISOR_TEST_LIBS)

ADVISOR_E2E = tests/e2e/advisor_lifecycle.sh tests/e2e/advisor_stress.sh
TESTS += $(ADVISOR_E2E)
EXTRA_DIST += $(ADVISOR_E2E) tests/e2e/advisor_lib.sh
