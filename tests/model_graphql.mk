# model_graphql tests: the GraphQL reader (model/model_graphql.c) and its
# GraphQL-over-HTTP extraction (model/model_graphql_http.c); the differential
# test against graphql-core (tests/graphql_diff.sh, driver tests/gql_driver)
check_PROGRAMS += tests/check_model_graphql tests/gql_driver
TESTS += tests/check_model_graphql tests/graphql_diff.sh
EXTRA_DIST += tests/graphql_diff.sh tests/graphql_diff.py
tests_check_model_graphql_SOURCES = tests/check_model_graphql.c
tests_check_model_graphql_CFLAGS = $(TEST_CFLAGS)
tests_check_model_graphql_LDADD = $(TEST_MODEL_LIBS)
tests_gql_driver_SOURCES = tests/gql_driver.c
tests_gql_driver_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_gql_driver_LDADD = $(MODEL_LIBS)
