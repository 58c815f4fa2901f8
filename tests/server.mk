# server tests: proviso-prover (server/). Unit tests link the server library;
# the end-to-end scripts start the real binary on 127.0.0.1 (port 0: the
# kernel picks a free port) and need curl.
SERVER_TEST_LIBS = $(SERVER_LIBS) $(CHECK_LIBS)
SERVER_TEST_CFLAGS = $(TEST_CFLAGS) $(MHD_CFLAGS)

check_PROGRAMS += tests/check_prover_body tests/check_server_config tests/check_httpd_token \
	tests/check_server_discover tests/check_server_routes tests/check_httpd_shell
TESTS += tests/check_prover_body tests/check_server_config tests/check_httpd_token \
	tests/check_server_discover tests/check_server_routes tests/check_httpd_shell
tests_check_httpd_shell_SOURCES = tests/check_httpd_shell.c
tests_check_httpd_shell_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_httpd_shell_LDADD = $(SERVER_TEST_LIBS)
tests_check_prover_body_SOURCES = tests/check_prover_body.c
tests_check_prover_body_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_prover_body_LDADD = $(SERVER_TEST_LIBS)
tests_check_server_config_SOURCES = tests/check_server_config.c
tests_check_server_config_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_server_config_LDADD = $(SERVER_TEST_LIBS)
tests_check_httpd_token_SOURCES = tests/check_httpd_token.c
tests_check_httpd_token_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_httpd_token_LDADD = $(SERVER_TEST_LIBS)
tests_check_server_discover_SOURCES = tests/check_server_discover.c
tests_check_server_discover_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_server_discover_LDADD = $(SERVER_TEST_LIBS)
tests_check_server_routes_SOURCES = tests/check_server_routes.c
tests_check_server_routes_CFLAGS = $(SERVER_TEST_CFLAGS)
tests_check_server_routes_LDADD = $(SERVER_TEST_LIBS)

SERVER_E2E = tests/e2e/server_routes.sh tests/e2e/server_errors.sh tests/e2e/server_sigterm.sh \
	tests/e2e/server_flood.sh tests/e2e/server_fail_alloc.sh
TESTS += $(SERVER_E2E)
EXTRA_DIST += $(SERVER_E2E) tests/e2e/server_lib.sh tests/e2e/server_gen.sh
