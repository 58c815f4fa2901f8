# proxy/ - proviso-proxy, the enforcing egress proxy. Links libmodel, OpenSSL,
# libevent, libhttp-parser and libbpf; never the prover or Z3 (tests/check-layering.sh).
PROXY_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS) $(LIBEVENT_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) \
	$(LIBBPF_CFLAGS)
PROXY_LIBS = proxy/libproxy.la $(HCLIENT_LIBS) $(MODEL_LIBS) $(OPENSSL_LIBS) $(LIBEVENT_LIBS) \
	$(HTTP_PARSER_LIBS) $(CURL_LIBS) $(LIBBPF_LIBS) $(PTHREAD_LIBS)

noinst_LTLIBRARIES += proxy/libproxy.la
proxy_libproxy_la_CFLAGS = $(PROXY_CFLAGS)
proxy_libproxy_la_SOURCES = proxy/proxy.h proxy/proxy_int.h \
	proxy/proxy_http.c proxy/proxy_chunk.c proxy/proxy_outcome.c proxy/proxy_metrics.c \
	proxy/proxy_policy.c proxy/proxy_reply.c proxy/proxy_ident.c proxy/proxy_ident.h \
	proxy/proxy_ident_pid.c proxy/proxy_taskfiles.c proxy/proxy_idq.c proxy/proxy_tls.c \
	proxy/proxy_log.c proxy/proxy_splice.c proxy/proxy_conn.c proxy/proxy_relay.c \
	proxy/proxy_tunnel.c proxy/proxy_server.c proxy/proxy_sandbox.c \
	proxy/proxy_ws.h proxy/proxy_ws.c proxy/proxy_wsconn.c
# advisor mode (proxy/advisor/): policy sync, policy.local, the denial stream, the
# agent skill; on the core's hooks, never called by name from the core
# (tests/check-layering.sh), and the only part that links libcurl (through hclient)
proxy_libproxy_la_SOURCES += proxy/advisor/proxy_advisor.h proxy/advisor/proxy_advisor.c \
	proxy/advisor/proxy_advisor_args.c proxy/advisor/proxy_local.c proxy/advisor/proxy_denials.c \
	proxy/advisor/proxy_skill.c
# GraphQL over HTTP: reading the operations of a request (docs/proxy.md#graphql)
proxy_libproxy_la_SOURCES += proxy/proxy_bodyhold.c proxy/proxy_rpc.c
# credential placeholders: the store and the rewriter (docs/proxy.md#credentials)
proxy_libproxy_la_SOURCES += proxy/proxy_cred.c proxy/proxy_credgate.c

# At the top of the build tree, like the other executables.
bin_PROGRAMS += proviso-proxy
proviso_proxy_SOURCES = proxy/proxy_main.c
proviso_proxy_CFLAGS = $(PROXY_CFLAGS)
proviso_proxy_LDADD = $(PROXY_LIBS)
