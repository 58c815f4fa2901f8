# model_validate tests
check_PROGRAMS += tests/check_model_validate
TESTS += tests/check_model_validate
tests_check_model_validate_SOURCES = tests/check_model_validate.c
tests_check_model_validate_CFLAGS = $(TEST_CFLAGS)
tests_check_model_validate_LDADD = $(TEST_MODEL_LIBS)
# the warnings tier and "did you mean"
check_PROGRAMS += tests/check_model_warn
TESTS += tests/check_model_warn
tests_check_model_warn_SOURCES = tests/check_model_warn.c
tests_check_model_warn_CFLAGS = $(TEST_CFLAGS)
tests_check_model_warn_LDADD = $(TEST_MODEL_LIBS)
