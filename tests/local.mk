# Check unit tests: one tests/check_<folder>_<concept>.c per source file.
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) -DPV_UNIT_TESTS
TEST_MODEL_LIBS = $(MODEL_LIBS) $(CHECK_LIBS)
TEST_PROVER_LIBS = $(PROVER_LIBS) $(CHECK_LIBS)
AM_TESTS_ENVIRONMENT = PV_SRCDIR='$(abs_top_srcdir)'; PV_BUILDDIR='$(abs_top_builddir)'; \
	export PV_SRCDIR PV_BUILDDIR;
EXTRA_DIST += tests/check-layering.sh tests/checksrc.sh tests/run-corpus.sh tests/cli_eval.sh \
	tests/cli_prove.sh tests/cli_validate.sh tests/fail_alloc.sh tests/ui_grants.sh \
	tests/ui/grants.mjs tests/readme_loop.sh tests/bootstrap_run.sh tests/docs_config_keys.sh \
	tests/sd_notify.sh
TESTS += tests/check-layering.sh tests/checksrc.sh tests/run-corpus.sh tests/cli_eval.sh \
	tests/cli_prove.sh tests/cli_validate.sh tests/fail_alloc.sh tests/ui_grants.sh tests/readme_loop.sh \
	tests/bootstrap_run.sh tests/docs_config_keys.sh tests/sd_notify.sh
# the table of docs/reference-compat.md#unenforced, row by row, on its files
EXTRA_DIST += tests/unenforced_fields.sh tests/data/unenforced
TESTS += tests/unenforced_fields.sh
# the long-function and dependency guards (also in `make lint`) and their own tests
EXTRA_DIST += tests/check-longfn.sh tests/longfn_guard.sh tests/check-deps.sh tests/deps.allowed \
	tests/deps_guard.sh
TESTS += tests/check-longfn.sh tests/longfn_guard.sh tests/check-deps.sh tests/deps_guard.sh
# check-layering.sh's rule that the proxy's core never reaches advisor mode by name
EXTRA_DIST += tests/layering_guard.sh tests/pid_lib.sh tests/cli_lib.sh
TESTS += tests/layering_guard.sh
# the tables and their docs (docs/architecture.md#tables)
EXTRA_DIST += tests/docs_categories.sh tests/docs_settings.sh tests/docs_eval_options.sh \
	tests/check-model-layers.sh \
	tests/check-advisor-calls.sh
TESTS += tests/docs_categories.sh tests/docs_settings.sh tests/docs_eval_options.sh \
	tests/check-model-layers.sh \
	tests/check-advisor-calls.sh
include $(srcdir)/tests/model_parse.mk
include $(srcdir)/tests/model_validate.mk
include $(srcdir)/tests/model_glob.mk
include $(srcdir)/tests/model_eval.mk
include $(srcdir)/tests/model_merge.mk
include $(srcdir)/tests/model_graphql.mk
include $(srcdir)/tests/prover.mk
include $(srcdir)/tests/proxy.mk
include $(srcdir)/tests/proxy_advisor.mk
include $(srcdir)/tests/server.mk
include $(srcdir)/tests/advisor.mk
include $(srcdir)/tests/audit.mk
include $(srcdir)/tests/fuzz.mk
include $(srcdir)/tests/bench.mk
include $(srcdir)/tests/install.mk
include $(srcdir)/tests/clients.mk
check_PROGRAMS += tests/check_common
TESTS += tests/check_common
tests_check_common_SOURCES = tests/check_common.c
tests_check_common_CFLAGS = $(TEST_CFLAGS)
tests_check_common_LDADD = common/libcommon.la $(CHECK_LIBS)

check_PROGRAMS += tests/check_hclient
TESTS += tests/check_hclient
tests_check_hclient_SOURCES = tests/check_hclient.c tests/check_net_util.c tests/check_net_util.h
tests_check_hclient_CFLAGS = $(TEST_CFLAGS) $(CURL_CFLAGS)
tests_check_hclient_LDADD = $(HCLIENT_LIBS) $(CHECK_LIBS) $(PTHREAD_LIBS)
