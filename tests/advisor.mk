# advisor tests: the reviewer CLI (proviso sandbox|policy|settings|rule).
# check_cli_text covers its pure parts (request paths, chunk text); the
# end-to-end script drives it against the real proviso-advisor and its
# prover child on 127.0.0.1.
check_PROGRAMS += tests/check_cli_text
TESTS += tests/check_cli_text
tests_check_cli_text_SOURCES = tests/check_cli_text.c cli/cli_http.c cli/cli_chunk.c
tests_check_cli_text_CFLAGS = $(TEST_CFLAGS) $(CURL_CFLAGS)
tests_check_cli_text_LDADD = common/libcommon.la $(JANSSON_LIBS) $(CURL_LIBS) $(CHECK_LIBS)

ADVISOR_E2E = tests/e2e/cli_advisor.sh
TESTS += $(ADVISOR_E2E)
EXTRA_DIST += $(ADVISOR_E2E)
