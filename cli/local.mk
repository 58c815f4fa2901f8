bin_PROGRAMS += proviso
proviso_SOURCES = cli/cli.h cli/proviso.c cli/cmd_validate.c cli/cmd_eval.c \
	cli/cmd_prove.c cli/cmd_corpus.c cli/cli_yamljson.c
proviso_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS)
proviso_LDADD = $(PROVER_LIBS) $(YAML_LIBS) $(JANSSON_LIBS)
