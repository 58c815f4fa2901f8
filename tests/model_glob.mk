# model_glob tests: pattern languages, automata, IP addresses, request paths
check_PROGRAMS += tests/check_model_glob tests/check_model_dfa tests/check_model_ip \
	tests/check_model_path
TESTS += tests/check_model_glob tests/check_model_dfa tests/check_model_ip \
	tests/check_model_path
tests_check_model_glob_SOURCES = tests/check_model_glob.c
tests_check_model_glob_CFLAGS = $(TEST_CFLAGS)
tests_check_model_glob_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_dfa_SOURCES = tests/check_model_dfa.c
tests_check_model_dfa_CFLAGS = $(TEST_CFLAGS)
tests_check_model_dfa_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_ip_SOURCES = tests/check_model_ip.c
tests_check_model_ip_CFLAGS = $(TEST_CFLAGS)
tests_check_model_ip_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_path_SOURCES = tests/check_model_path.c
tests_check_model_path_CFLAGS = $(TEST_CFLAGS)
tests_check_model_path_LDADD = $(TEST_MODEL_LIBS)
