# advisor tests: the reviewer CLI (proviso sandbox|policy|settings|rule) end
# to end against the real proviso-advisor and its prover child on 127.0.0.1.
ADVISOR_E2E = tests/e2e/cli_advisor.sh
TESTS += $(ADVISOR_E2E)
EXTRA_DIST += $(ADVISOR_E2E)
