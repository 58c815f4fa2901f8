# proviso-prover: the prover HTTP service (server/).
noinst_LTLIBRARIES += server/libserver.la
server_libserver_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(MHD_CFLAGS) \
	$(CRYPTO_CFLAGS)
server_libserver_la_SOURCES = server/server.h server/server_config.c \
	server/server_metrics.c server/server_http.c \
	server/server_routes.c server/server_discover.c server/server_api.c
nodist_server_libserver_la_SOURCES = server/server_data.c
BUILT_SOURCES += server/server_data.c
CLEANFILES += server/server_data.c
server/server_data.c: $(srcdir)/common/embed.sh $(srcdir)/server/data/openapi.json
	$(AM_V_GEN)$(MKDIR_P) server && $(SHELL) $(srcdir)/common/embed.sh server_data_ \
		$(srcdir)/server/data/openapi.json > $@.tmp && mv $@.tmp $@
EXTRA_DIST += server/data
SERVER_LIBS = server/libserver.la $(HTTPD_LIBS) $(PROVER_LIBS) $(MHD_LIBS) $(CRYPTO_LIBS)

bin_PROGRAMS += proviso-prover
proviso_prover_SOURCES = server/server_main.c
proviso_prover_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS)
proviso_prover_LDADD = $(SERVER_LIBS)
