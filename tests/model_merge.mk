# model_merge tests: proposals and merge, credentials, registries
check_PROGRAMS += tests/check_model_merge tests/check_model_cred tests/check_model_registry
TESTS += tests/check_model_merge tests/check_model_cred tests/check_model_registry
tests_check_model_merge_SOURCES = tests/check_model_merge.c
tests_check_model_merge_CFLAGS = $(TEST_CFLAGS)
tests_check_model_merge_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_cred_SOURCES = tests/check_model_cred.c
tests_check_model_cred_CFLAGS = $(TEST_CFLAGS)
tests_check_model_cred_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_registry_SOURCES = tests/check_model_registry.c
tests_check_model_registry_CFLAGS = $(TEST_CFLAGS)
tests_check_model_registry_LDADD = $(TEST_MODEL_LIBS)
check_PROGRAMS += tests/check_model_fields
TESTS += tests/check_model_fields
tests_check_model_fields_SOURCES = tests/check_model_fields.c
tests_check_model_fields_CFLAGS = $(TEST_CFLAGS)
tests_check_model_fields_LDADD = $(TEST_MODEL_LIBS)
