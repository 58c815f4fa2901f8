# advisor/ - proviso-advisor, the gateway. Links libmodel, libhttpd, SQLite,
# libcurl and OpenSSL; never the prover or Z3 (it proves over HTTP;
# tests/check-layering.sh checks the sources and the linked binary).
ADVISOR_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS) $(SQLITE_CFLAGS) $(LIBPQ_CFLAGS) \
	$(CURL_CFLAGS) $(CRYPTO_CFLAGS) -DBINDIR='"$(bindir)"'
ADVISOR_LIBS = advisor/libadvisor.la $(HCLIENT_LIBS) $(HTTPD_LIBS) $(MODEL_LIBS) audit/libaudit.la $(SQLITE_LIBS) $(LIBPQ_LIBS) \
	$(CURL_LIBS) $(CRYPTO_LIBS) $(PTHREAD_LIBS)

noinst_LTLIBRARIES += advisor/libadvisor.la
advisor_libadvisor_la_CFLAGS = $(ADVISOR_CFLAGS)
# The rooms, bottom first (docs/architecture.md#advisor); each calls only
# its own files and the rooms below it (tests/check-advisor-calls.sh).
ADVISOR_STORE_SOURCES = advisor/store/store.h advisor/store/store_int.h advisor/store/store.c \
	advisor/store/store_common.c advisor/store/store_group.c \
	advisor/store/sqlite/store_sqlite.c advisor/store/sqlite/store_sql.c \
	advisor/store/sqlite/store_sandbox.c advisor/store/sqlite/store_revision.c \
	advisor/store/sqlite/store_chunk.c advisor/store/sqlite/store_event.c \
	advisor/store/pg/store_pg.c advisor/store/pg/store_pg_pool.c advisor/store/pg/store_pg_repl.c
ADVISOR_CORE_SOURCES = advisor/core/core.h advisor/core/advisor_util.c advisor/core/advisor_worker.c \
	advisor/core/advisor_recent.c advisor/core/advisor_settings.c advisor/core/advisor_rule.c \
	advisor/core/advisor_integrity.c advisor/core/advisor_events.c advisor/core/advisor_prover.c \
	advisor/core/advisor_pool.c
ADVISOR_LIFE_SOURCES = advisor/life/life.h advisor/life/life_int.h advisor/life/advisor_eval.c \
	advisor/life/advisor_diff.c \
	advisor/life/advisor_envelope.c advisor/life/advisor_widen.c advisor/life/advisor_resolve.c \
	advisor/life/advisor_revision.c advisor/life/advisor_reprove.c advisor/life/advisor_chunk.c \
	advisor/life/advisor_submit.c advisor/life/advisor_decide.c advisor/life/advisor_view.c \
	advisor/life/advisor_suggest.c
ADVISOR_INPUTS_SOURCES = advisor/inputs/inputs.h advisor/inputs/advisor_mapper.c \
	advisor/inputs/advisor_peers.c advisor/inputs/advisor_tools.c
ADVISOR_HTTP_SOURCES = advisor/http/http.h advisor/http/http_int.h advisor/http/advisor_routes.c \
	advisor/http/advisor_routes_chunk.c advisor/http/advisor_routes_sandbox.c \
	advisor/http/advisor_route_args.c advisor/http/advisor_api.c advisor/http/advisor_ui.c
ADVISOR_PROC_SOURCES = advisor/proc/proc.h advisor/proc/advisor_child.c advisor/proc/advisor_listen.c
advisor_libadvisor_la_SOURCES = $(ADVISOR_STORE_SOURCES) $(ADVISOR_CORE_SOURCES) \
	$(ADVISOR_LIFE_SOURCES) $(ADVISOR_INPUTS_SOURCES) $(ADVISOR_HTTP_SOURCES) \
	$(ADVISOR_PROC_SOURCES)
nodist_advisor_libadvisor_la_SOURCES = advisor/advisor_data.c
BUILT_SOURCES += advisor/advisor_data.c
CLEANFILES += advisor/advisor_data.c
ADVISOR_DATA_FILES = $(srcdir)/advisor/data/openapi.json $(srcdir)/advisor/ui/index.html \
	$(srcdir)/advisor/ui/app.js $(srcdir)/advisor/ui/app.css
advisor/advisor_data.c: $(srcdir)/common/embed.sh $(ADVISOR_DATA_FILES)
	$(AM_V_GEN)$(MKDIR_P) advisor && $(SHELL) $(srcdir)/common/embed.sh advisor_data_ \
		$(ADVISOR_DATA_FILES) > $@.tmp && mv $@.tmp $@
EXTRA_DIST += advisor/data advisor/ui common/embed.sh

bin_PROGRAMS += proviso-advisor
proviso_advisor_SOURCES = advisor/proc/advisor_main.c
proviso_advisor_CFLAGS = $(ADVISOR_CFLAGS)
proviso_advisor_LDADD = $(ADVISOR_LIBS)
