noinst_LTLIBRARIES += prover/libprover.la
prover_libprover_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
prover_libprover_la_SOURCES = prover/prover.h prover/prover_session.c
