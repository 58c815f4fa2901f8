noinst_LTLIBRARIES += model/libmodel.la
model_libmodel_la_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS)
model_libmodel_la_SOURCES = model/model.h model/model_int.h \
	model/model_policy.c model/model_diag.c model/model_load.c model/model_yaml.c model/model_yamljson.c model/model_json.c model/model_schema.c \
	model/model_validate.c model/model_validate.h \
	model/model_validate_endpoint.c model/model_canon.c model/model_copy.c model/model_merge.c \
	model/model_proposal.c model/model_peers.c \
	model/model_ip.c model/model_glob.c model/model_dfa.c model/model_dfa.h model/model_lang.c \
	model/model_path.c model/model_compile.c model/model_index.c model/model_eval.c \
	model/model_eval.h model/model_eval_l7.c model/model_eval_detail.c \
	model/model_graphql.c model/model_graphql_http.c \
	model/model_cred.c model/model_registry.c \
	model/model_access.c model/model_node.c model/model_walk.c model/model_warn.c \
	model/model_graphql.h model/model_gql_op.c \
	model/model_rpc.h model/model_rpc.c model/model_rpc_int.h model/model_rpc_scan.c model/model_eval_rpc.c \
	model/model_validate_rpc.c
nodist_model_libmodel_la_SOURCES = model/model_registry_data.c
BUILT_SOURCES += model/model_registry_data.c
CLEANFILES += model/model_registry_data.c
REGISTRY_BINARIES = claude curl gh git nc node npm pip python3 ssh wget
REGISTRY_APIS = github
REGISTRY_FILES = $(REGISTRY_BINARIES:%=$(srcdir)/model/registry/binaries/%.yaml) \
	$(REGISTRY_APIS:%=$(srcdir)/model/registry/apis/%.yaml)
model/model_registry_data.c: $(srcdir)/model/registry/embed.sh $(REGISTRY_FILES)
	$(AM_V_GEN)$(MKDIR_P) model && $(SHELL) $(srcdir)/model/registry/embed.sh \
		$(srcdir)/model/registry > $@.tmp && mv $@.tmp $@
EXTRA_DIST += model/registry
