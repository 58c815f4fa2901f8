# model_eval tests: the concrete evaluator (model/model_eval.c). Most of its
# cases are data, tests/eval/*.yaml, read by check_model_eval
# (docs/internals/testing.md#the-evaluator-table); model_eval_data.sh shows
# the runner fails on wrong, lost or unreadable data.
check_PROGRAMS += tests/check_model_eval
TESTS += tests/check_model_eval tests/model_eval_data.sh
EXTRA_DIST += tests/eval tests/model_eval_data.sh
tests_check_model_eval_SOURCES = tests/check_model_eval.c
tests_check_model_eval_CFLAGS = $(TEST_CFLAGS)
tests_check_model_eval_LDADD = $(TEST_MODEL_LIBS)
# GraphQL operations (docs/semantics.md#graphql)
check_PROGRAMS += tests/check_model_gql
TESTS += tests/check_model_gql
tests_check_model_gql_SOURCES = tests/check_model_gql.c
tests_check_model_gql_CFLAGS = $(TEST_CFLAGS)
tests_check_model_gql_LDADD = $(TEST_MODEL_LIBS)
check_PROGRAMS += tests/check_model_rpc
TESTS += tests/check_model_rpc
tests_check_model_rpc_SOURCES = tests/check_model_rpc.c
tests_check_model_rpc_CFLAGS = $(TEST_CFLAGS)
tests_check_model_rpc_LDADD = $(TEST_MODEL_LIBS)
