# advisor/ - proviso-advisor, the gateway. Links libmodel, libhttpd, SQLite,
# libcurl and OpenSSL; never the prover or Z3 (it proves over HTTP;
# tests/check-layering.sh checks the sources and the linked binary).
ADVISOR_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS) $(SQLITE_CFLAGS) $(LIBPQ_CFLAGS) \
	$(CURL_CFLAGS) $(CRYPTO_CFLAGS) -DBINDIR='"$(bindir)"'
ADVISOR_LIBS = advisor/libadvisor.la $(HCLIENT_LIBS) $(HTTPD_LIBS) $(MODEL_LIBS) audit/libaudit.la $(SQLITE_LIBS) $(LIBPQ_LIBS) \
	$(CURL_LIBS) $(CRYPTO_LIBS) $(PTHREAD_LIBS)

noinst_LTLIBRARIES += advisor/libadvisor.la
advisor_libadvisor_la_CFLAGS = $(ADVISOR_CFLAGS)
advisor_libadvisor_la_SOURCES = advisor/advisor.h advisor/store.h advisor/store_int.h advisor/store.c advisor/store_common.c \
	advisor/store_group.c advisor/store_sql.c advisor/store_sqlite.c \
	advisor/store_sandbox.c advisor/store_revision.c advisor/store_chunk.c advisor/store_event.c advisor/store_pg.c advisor/store_pg_repl.c \
	advisor/advisor_util.c advisor/advisor_worker.c advisor/advisor_recent.c advisor/advisor_integrity.c advisor/advisor_settings.c advisor/advisor_rule.c \
	advisor/advisor_prover.c advisor/advisor_pool.c advisor/advisor_eval.c advisor/advisor_events.c \
	advisor/advisor_mapper.c advisor/advisor_resolve.c advisor/advisor_revision.c advisor/advisor_peers.c advisor/advisor_tools.c \
	advisor/advisor_int.h advisor/advisor_chunk.c advisor/advisor_submit.c advisor/advisor_view.c \
	advisor/advisor_decide.c advisor/advisor_routes_chunk.c advisor/advisor_routes_sandbox.c advisor/advisor_reprove.c advisor/advisor_widen.c advisor/advisor_envelope.c advisor/advisor_suggest.c advisor/advisor_routes.c advisor/advisor_route_args.c advisor/advisor_api.c \
	advisor/advisor_child.c advisor/advisor_ui.c advisor/advisor_listen.c
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
proviso_advisor_SOURCES = advisor/advisor_main.c
proviso_advisor_CFLAGS = $(ADVISOR_CFLAGS)
proviso_advisor_LDADD = $(ADVISOR_LIBS)
