noinst_LTLIBRARIES += prover/libprover.la
prover_libprover_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
prover_libprover_la_SOURCES = prover/prover.h prover/prover_int.h prover/prover_query_int.h \
	prover/prover_session.c prover/prover_util.c prover/prover_atoms.c \
	prover/prover_units.c prover/prover_encode.c prover/prover_rpc.c prover/prover_dims.c prover/prover_query.c prover/prover_concrete.c prover/prover_witness.c \
	prover/prover_run.c prover/prover_report.c \
	prover/prover_body.c prover/prover_job.c prover/prover_grants.c
