# fuzz tests: libFuzzer targets, built only with --enable-fuzz CC=clang and
# never part of make check. The project code a target runs is instrumented
# for the fuzzer so that libFuzzer sees its coverage: model/ and common/ are
# compiled once into two archives with the fuzzer's flags (FUZZ_LIB_FLAGS),
# which every target links in place of the uninstrumented libmodel and
# libcommon; a target's other sources are compiled into it.
#   ./tests/fuzz/fuzz_policy_yaml -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g
FUZZ_LIB_FLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g
noinst_LIBRARIES = tests/fuzz/libfuzz_common.a tests/fuzz/libfuzz_model.a
tests_fuzz_libfuzz_common_a_SOURCES = $(common_libcommon_la_SOURCES)
tests_fuzz_libfuzz_common_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) \
	$(CRYPTO_CFLAGS) $(FUZZ_LIB_FLAGS)
tests_fuzz_libfuzz_model_a_SOURCES = $(model_libmodel_la_SOURCES)
tests_fuzz_libfuzz_model_a_CFLAGS = $(tests_fuzz_libfuzz_common_a_CFLAGS)
FUZZ_COMMON_LIB = tests/fuzz/libfuzz_common.a
FUZZ_MODEL_LIB = tests/fuzz/libfuzz_model.a tests/fuzz/libfuzz_common.a
FUZZ_LIBS = $(YAML_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_policy_yaml tests/fuzz/fuzz_policy_json

tests_fuzz_fuzz_policy_yaml_SOURCES = tests/fuzz/fuzz_policy.h tests/fuzz/fuzz_policy_yaml.c
tests_fuzz_fuzz_policy_yaml_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) \
	$(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_policy_yaml_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_policy_yaml_LDADD = $(FUZZ_MODEL_LIB) $(FUZZ_LIBS)

tests_fuzz_fuzz_policy_json_SOURCES = tests/fuzz/fuzz_policy.h tests/fuzz/fuzz_policy_json.c
tests_fuzz_fuzz_policy_json_CFLAGS = $(tests_fuzz_fuzz_policy_yaml_CFLAGS)
tests_fuzz_fuzz_policy_json_LDFLAGS = $(tests_fuzz_fuzz_policy_yaml_LDFLAGS)
tests_fuzz_fuzz_policy_json_LDADD = $(FUZZ_MODEL_LIB) $(FUZZ_LIBS)
endif

# proviso-prover's request body decoder (owner: prover). Same convention: the
# decoder's source is compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_prover_body -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_prover_body
tests_fuzz_fuzz_prover_body_SOURCES = tests/fuzz/fuzz_prover_body.c prover/prover.h \
	prover/prover_body.c
tests_fuzz_fuzz_prover_body_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_prover_body_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_prover_body_LDADD = $(FUZZ_COMMON_LIB) $(JANSSON_LIBS) $(CRYPTO_LIBS)
endif

# proviso-proxy's request-head parser and validator (owner: proxy). Same
# convention: proxy_http.c is compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_proxy_request -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_proxy_request
tests_fuzz_fuzz_proxy_request_SOURCES = tests/fuzz/fuzz_proxy_request.c proxy/proxy.h \
	proxy/proxy_int.h proxy/proxy_http.c proxy/proxy_chunk.c
tests_fuzz_fuzz_proxy_request_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_request_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_request_LDADD = $(FUZZ_COMMON_LIB) $(CRYPTO_LIBS)
# the chunked-body decoder (proxy_chunk.c), same convention
noinst_PROGRAMS += tests/fuzz/fuzz_proxy_chunked
tests_fuzz_fuzz_proxy_chunked_SOURCES = tests/fuzz/fuzz_proxy_chunked.c proxy/proxy_int.h \
	proxy/proxy_chunk.c
tests_fuzz_fuzz_proxy_chunked_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_chunked_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_chunked_LDADD = $(FUZZ_COMMON_LIB) $(CRYPTO_LIBS)
endif

# proviso-proxy's credential placeholder rewriter (owner: proxy, proxy_cred.c),
# with the model sources it reads the store with; same convention.
#   ./tests/fuzz/fuzz_cred_rewrite -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_cred_rewrite
tests_fuzz_fuzz_cred_rewrite_SOURCES = tests/fuzz/fuzz_cred_rewrite.c proxy/proxy_int.h \
	proxy/proxy_cred.c
tests_fuzz_fuzz_cred_rewrite_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) \
	$(CRYPTO_CFLAGS) $(LIBEVENT_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_cred_rewrite_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_cred_rewrite_LDADD = $(FUZZ_MODEL_LIB) $(FUZZ_LIBS)
endif

# the proxy's WebSocket frame parser and GraphQL-over-WebSocket classifier
# (proxy_ws.c), same convention
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_ws_frames
tests_fuzz_fuzz_ws_frames_SOURCES = tests/fuzz/fuzz_ws_frames.c proxy/proxy_int.h proxy/proxy_ws.h \
	proxy/proxy_ws.c proxy/proxy_http.c
tests_fuzz_fuzz_ws_frames_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_ws_frames_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_ws_frames_LDADD = $(FUZZ_COMMON_LIB) $(JANSSON_LIBS) $(CRYPTO_LIBS)
endif

# proviso-advisor's readers of proposal bodies (owner: advisor). advisor_rule.c,
# advisor_util.c and advisor_submit.c (advisor_proposal_parse) are compiled into
# the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_advisor_body -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_advisor_body
tests_fuzz_fuzz_advisor_body_SOURCES = tests/fuzz/fuzz_advisor_body.c advisor/core/core.h \
	advisor/life/life.h advisor/inputs/inputs.h \
	advisor/core/advisor_rule.c advisor/core/advisor_util.c advisor/core/advisor_settings.c \
	advisor/inputs/advisor_mapper.c advisor/life/advisor_submit.c
tests_fuzz_fuzz_advisor_body_CFLAGS = $(ADVISOR_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_advisor_body_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
# the project archives below only resolve what the target never runs (the
# store, the HTTP replies, the prover client): every symbol of the five
# advisor files above is defined by the target's own objects, and the model
# and common/ come from the instrumented archives after them, so the linker
# takes no uninstrumented copy of what the target runs.
tests_fuzz_fuzz_advisor_body_LDADD = advisor/libadvisor.la httpd/libhttpd.la hclient/libhclient.la audit/libaudit.la \
	$(FUZZ_MODEL_LIB) $(FUZZ_LIBS) $(MHD_LIBS) $(SQLITE_LIBS) $(LIBPQ_LIBS) $(CURL_LIBS) \
	$(PTHREAD_LIBS)
endif

# `proviso audit verify`'s reader of export files (owner: audit). The audit
# sources are compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_audit_verify -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_audit_verify
tests_fuzz_fuzz_audit_verify_SOURCES = tests/fuzz/fuzz_audit_verify.c audit/audit.h \
	audit/audit_int.h audit/audit_key.c audit/audit_chain.c audit/audit_state.c
tests_fuzz_fuzz_audit_verify_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_audit_verify_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_audit_verify_LDADD = $(FUZZ_COMMON_LIB) $(JANSSON_LIBS) $(CRYPTO_LIBS) \
	$(PTHREAD_LIBS)
endif

# the GraphQL reader and its GraphQL-over-HTTP extraction (owner: model).
# Same convention: the two sources are compiled into the target.
#   ./tests/fuzz/fuzz_graphql -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_graphql
tests_fuzz_fuzz_graphql_SOURCES = tests/fuzz/fuzz_graphql.c model/model_graphql.h \
	model/model_graphql.c model/model_graphql_http.c model/model_gql_op.c
tests_fuzz_fuzz_graphql_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) \
	$(FUZZ_FLAGS)
tests_fuzz_fuzz_graphql_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_graphql_LDADD = $(FUZZ_COMMON_LIB) $(JANSSON_LIBS) $(CRYPTO_LIBS)
endif

# the JSON-RPC / MCP reader (owner: model), same convention
#   ./tests/fuzz/fuzz_rpc -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_rpc
tests_fuzz_fuzz_rpc_SOURCES = tests/fuzz/fuzz_rpc.c model/model_rpc.h model/model_rpc.c \
	model/model_rpc_int.h model/model_rpc_scan.c
tests_fuzz_fuzz_rpc_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) \
	$(FUZZ_FLAGS)
tests_fuzz_fuzz_rpc_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_rpc_LDADD = $(FUZZ_COMMON_LIB) $(JANSSON_LIBS) $(CRYPTO_LIBS)
endif

# the CLI's YAML-to-JSON reading (model/model_yamljson.c over model_yaml.c),
# same convention
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_yaml_json
tests_fuzz_fuzz_yaml_json_SOURCES = tests/fuzz/fuzz_yaml_json.c
tests_fuzz_fuzz_yaml_json_CFLAGS = $(tests_fuzz_fuzz_policy_yaml_CFLAGS)
tests_fuzz_fuzz_yaml_json_LDFLAGS = $(tests_fuzz_fuzz_policy_yaml_LDFLAGS)
tests_fuzz_fuzz_yaml_json_LDADD = $(FUZZ_MODEL_LIB) $(FUZZ_LIBS)
endif

# make fuzz-smoke: every target above for FUZZ_SMOKE_SECONDS (default 60) on
# a copy of its seed corpus (tests/fuzz/corpus/TARGET/) with its dictionary
# (tests/fuzz/TARGET.dict); fails on a crash, leak or timeout and prints the
# edges reached by the seeds and at the end (tests/fuzz/smoke.sh). Needs a
# build configured with --enable-fuzz CC=clang (.ci/run uses build-fuzz/).
FUZZ_TARGETS = tests/fuzz/fuzz_policy_yaml tests/fuzz/fuzz_policy_json \
	tests/fuzz/fuzz_prover_body tests/fuzz/fuzz_proxy_request tests/fuzz/fuzz_proxy_chunked \
	tests/fuzz/fuzz_advisor_body tests/fuzz/fuzz_audit_verify tests/fuzz/fuzz_ws_frames \
	tests/fuzz/fuzz_graphql tests/fuzz/fuzz_cred_rewrite tests/fuzz/fuzz_yaml_json \
	tests/fuzz/fuzz_rpc
EXTRA_DIST += tests/fuzz/smoke.sh tests/fuzz/seeds.py tests/fuzz/corpus $(FUZZ_TARGETS:=.dict)
CLEANFILES += fuzz-smoke.txt fuzz-smoke-*.log
if ENABLE_FUZZ
fuzz-smoke: $(FUZZ_TARGETS)
	$(SHELL) $(srcdir)/tests/fuzz/smoke.sh $(srcdir) $(builddir) $(FUZZ_TARGETS)
else
fuzz-smoke:
	@echo "fuzz-smoke: configure a build directory with --enable-fuzz CC=clang:"; \
	echo "  mkdir build-fuzz && cd build-fuzz && ../configure CC=clang --enable-fuzz"; \
	exit 1
endif
.PHONY: fuzz-smoke
