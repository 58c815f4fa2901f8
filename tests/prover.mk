# Prover tests (owner: prover).
check_PROGRAMS += tests/check_prover_compat
TESTS += tests/check_prover_compat
tests_check_prover_compat_SOURCES = tests/check_prover_compat.c tests/check_prover_util.h
tests_check_prover_compat_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_compat_LDADD = $(TEST_PROVER_LIBS)
check_PROGRAMS += tests/check_prover_property
TESTS += tests/check_prover_property
tests_check_prover_property_SOURCES = tests/check_prover_property.c tests/check_prover_util.h
tests_check_prover_property_CFLAGS = $(TEST_CFLAGS)
tests_check_prover_property_LDADD = $(TEST_PROVER_LIBS)
