# Prover tests (owner: prover).
check_PROGRAMS += tests/check_prover_property
TESTS += tests/check_prover_property
tests_check_prover_property_SOURCES = tests/check_prover_property.c tests/check_prover_util.h \
	tests/bench/bench_policy.h
tests_check_prover_property_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_property_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_report
TESTS += tests/check_prover_report
tests_check_prover_report_SOURCES = tests/check_prover_report.c tests/check_prover_util.h
tests_check_prover_report_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_report_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_atoms
TESTS += tests/check_prover_atoms
tests_check_prover_atoms_SOURCES = tests/check_prover_atoms.c tests/check_prover_util.h
tests_check_prover_atoms_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_atoms_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_encode
TESTS += tests/check_prover_encode
tests_check_prover_encode_SOURCES = tests/check_prover_encode.c tests/check_prover_util.h
tests_check_prover_encode_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_encode_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_grants
TESTS += tests/check_prover_grants
tests_check_prover_grants_SOURCES = tests/check_prover_grants.c tests/check_prover_util.h
tests_check_prover_grants_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_grants_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_units
TESTS += tests/check_prover_units
tests_check_prover_units_SOURCES = tests/check_prover_units.c tests/check_prover_util.h
tests_check_prover_units_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_units_LDADD = $(TEST_PROVER_LIBS)
# GraphQL: the prover against the evaluator (docs/internals/testing.md)
check_PROGRAMS += tests/check_prover_gql
TESTS += tests/check_prover_gql
tests_check_prover_gql_SOURCES = tests/check_prover_gql.c tests/check_prover_util.h
tests_check_prover_gql_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_gql_LDADD = $(TEST_PROVER_LIBS)
# JSON-RPC and MCP: the prover against the evaluator (docs/internals/testing.md)
check_PROGRAMS += tests/check_prover_rpc
TESTS += tests/check_prover_rpc
tests_check_prover_rpc_SOURCES = tests/check_prover_rpc.c tests/check_prover_util.h
tests_check_prover_rpc_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_rpc_LDADD = $(TEST_PROVER_LIBS)
# adding a deny rule never grants anything: evaluator and prover on random pairs
check_PROGRAMS += tests/check_prover_deny
TESTS += tests/check_prover_deny
tests_check_prover_deny_SOURCES = tests/check_prover_deny.c tests/check_prover_util.h
tests_check_prover_deny_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_deny_LDADD = $(TEST_PROVER_LIBS)
