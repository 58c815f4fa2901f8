# cli/ - the proviso command. The reviewer commands (sandbox, policy,
# settings, rule) reach proviso-advisor over HTTP only (libcurl): the command
# links neither libhttpd nor libadvisor.
bin_PROGRAMS += proviso
proviso_SOURCES = cli/cli.h cli/proviso.c cli/cmd_validate.c cli/cmd_eval.c \
	cli/cmd_prove.c cli/cmd_corpus.c cli/cli_yamljson.c \
	cli/cli_http.c cli/cli_chunk.c cli/cmd_advisor.c cli/cmd_rule.c \
	cli/cmd_audit.c cli/cli_replay.h cli/cli_replay.c cli/cli_recompute.c \
	cli/cmd_run.c cli/cmd_sandbox_run.c
proviso_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(CURL_CFLAGS) $(CRYPTO_CFLAGS)
proviso_LDADD = $(SANDBOX_LIBS) $(HCLIENT_LIBS) $(PROVER_LIBS) audit/libaudit.la $(YAML_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) \
	$(CRYPTO_LIBS)
