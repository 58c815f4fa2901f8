# audit tests: the decision record's chain (audit/) and `proviso audit`.
# The unit test builds and mutates exports in process; the end-to-end
# scripts start the real advisor (and its prover child) on 127.0.0.1 and
# need curl, jq and openssl.
check_PROGRAMS += tests/check_audit_chain
TESTS += tests/check_audit_chain
tests_check_audit_chain_SOURCES = tests/check_audit_chain.c
tests_check_audit_chain_CFLAGS = $(TEST_CFLAGS) $(CRYPTO_CFLAGS)
tests_check_audit_chain_LDADD = $(AUDIT_LIBS) $(CHECK_LIBS)
# The state a chain implies, and verify's recomputation (cli_recompute.c,
# which needs the model's merge).
check_PROGRAMS += tests/check_audit_state
TESTS += tests/check_audit_state
tests_check_audit_state_SOURCES = tests/check_audit_state.c cli/cli_recompute.c
tests_check_audit_state_CFLAGS = $(TEST_CFLAGS) $(CRYPTO_CFLAGS)
tests_check_audit_state_LDADD = $(MODEL_LIBS) $(AUDIT_LIBS) $(CHECK_LIBS)

AUDIT_E2E = tests/e2e/audit_chain.sh tests/e2e/audit_durability.sh tests/e2e/audit_tamper.sh \
	tests/e2e/audit_inputs.sh
TESTS += $(AUDIT_E2E)
EXTRA_DIST += $(AUDIT_E2E)
