# fuzz tests: libFuzzer targets, built only with --enable-fuzz CC=clang and
# never part of make check. The model sources are compiled into each target
# (with the target's flags) so that libFuzzer sees coverage of the loader.
#   ./tests/fuzz/fuzz_policy_yaml -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g
FUZZ_LIBS = common/libcommon.la $(YAML_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz_policy_yaml tests/fuzz/fuzz_policy_json

tests_fuzz_fuzz_policy_yaml_SOURCES = tests/fuzz/fuzz_policy.h tests/fuzz/fuzz_policy_yaml.c \
	$(model_libmodel_la_SOURCES)
nodist_tests_fuzz_fuzz_policy_yaml_SOURCES = model/model_registry_data.c
tests_fuzz_fuzz_policy_yaml_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) \
	$(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_policy_yaml_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_policy_yaml_LDADD = $(FUZZ_LIBS)

tests_fuzz_fuzz_policy_json_SOURCES = tests/fuzz/fuzz_policy.h tests/fuzz/fuzz_policy_json.c \
	$(model_libmodel_la_SOURCES)
nodist_tests_fuzz_fuzz_policy_json_SOURCES = model/model_registry_data.c
tests_fuzz_fuzz_policy_json_CFLAGS = $(tests_fuzz_fuzz_policy_yaml_CFLAGS)
tests_fuzz_fuzz_policy_json_LDFLAGS = $(tests_fuzz_fuzz_policy_yaml_LDFLAGS)
tests_fuzz_fuzz_policy_json_LDADD = $(FUZZ_LIBS)
endif

# proviso-prover's request body decoder (owner: prover). Same convention: the
# decoder's source is compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_prover_body -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_prover_body
tests_fuzz_fuzz_prover_body_SOURCES = tests/fuzz/fuzz_prover_body.c prover/prover.h \
	prover/prover_body.c
tests_fuzz_fuzz_prover_body_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_prover_body_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_prover_body_LDADD = common/libcommon.la $(JANSSON_LIBS)
endif

# proviso-proxy's request-head parser and validator (owner: proxy). Same
# convention: proxy_http.c is compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_proxy_request -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_proxy_request
tests_fuzz_fuzz_proxy_request_SOURCES = tests/fuzz/fuzz_proxy_request.c proxy/proxy.h \
	proxy/proxy_int.h proxy/proxy_http.c proxy/proxy_chunk.c
tests_fuzz_fuzz_proxy_request_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_request_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_request_LDADD = common/libcommon.la
# the chunked-body decoder (proxy_chunk.c), same convention
noinst_PROGRAMS += tests/fuzz/fuzz_proxy_chunked
tests_fuzz_fuzz_proxy_chunked_SOURCES = tests/fuzz/fuzz_proxy_chunked.c proxy/proxy_int.h \
	proxy/proxy_chunk.c
tests_fuzz_fuzz_proxy_chunked_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_chunked_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_proxy_chunked_LDADD = common/libcommon.la
endif

# proviso-advisor's readers of proposal bodies (owner: advisor). advisor_rule.c
# and advisor_util.c are compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_advisor_body -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_advisor_body
tests_fuzz_fuzz_advisor_body_SOURCES = tests/fuzz/fuzz_advisor_body.c advisor/advisor.h \
	advisor/advisor_rule.c advisor/advisor_util.c advisor/advisor_settings.c \
	advisor/advisor_mapper.c
tests_fuzz_fuzz_advisor_body_CFLAGS = $(ADVISOR_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_advisor_body_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_advisor_body_LDADD = $(ADVISOR_LIBS)
endif

# `proviso audit verify`'s reader of export files (owner: audit). The audit
# sources are compiled into the target with the fuzzer's flags.
#   ./tests/fuzz/fuzz_audit_verify -max_total_time=120 CORPUS_DIR
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_audit_verify
tests_fuzz_fuzz_audit_verify_SOURCES = tests/fuzz/fuzz_audit_verify.c audit/audit.h \
	audit/audit_int.h audit/audit_key.c audit/audit_chain.c
tests_fuzz_fuzz_audit_verify_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_audit_verify_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_audit_verify_LDADD = common/libcommon.la $(JANSSON_LIBS) $(CRYPTO_LIBS) \
	$(PTHREAD_LIBS)
endif
