# model_parse tests: YAML/JSON readers, schema walker, canonical form
check_PROGRAMS += tests/check_model_parse tests/check_model_canon
TESTS += tests/check_model_parse tests/check_model_canon
tests_check_model_parse_SOURCES = tests/check_model_parse.c
tests_check_model_parse_CFLAGS = $(TEST_CFLAGS)
tests_check_model_parse_LDADD = $(TEST_MODEL_LIBS)
tests_check_model_canon_SOURCES = tests/check_model_canon.c
tests_check_model_canon_CFLAGS = $(TEST_CFLAGS)
tests_check_model_canon_LDADD = $(TEST_MODEL_LIBS)

check_PROGRAMS += tests/check_model_yamljson
TESTS += tests/check_model_yamljson
tests_check_model_yamljson_SOURCES = tests/check_model_yamljson.c
tests_check_model_yamljson_CFLAGS = $(TEST_CFLAGS)
tests_check_model_yamljson_LDADD = $(TEST_MODEL_LIBS)
