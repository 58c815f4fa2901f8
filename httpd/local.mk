# httpd/ - libhttpd, the HTTP service layer shared by proviso-prover and
# proviso-advisor (libmicrohttpd, a worker pool, the bearer token).
noinst_LTLIBRARIES += httpd/libhttpd.la
httpd_libhttpd_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS) $(CRYPTO_CFLAGS)
httpd_libhttpd_la_SOURCES = httpd/httpd.h httpd/httpd_token.c httpd/httpd_pool.c \
	httpd/httpd_server.c httpd/httpd_shell.c \
	httpd/httpd_metrics.c
HTTPD_LIBS = httpd/libhttpd.la common/libcommon.la $(MHD_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS) \
	$(PTHREAD_LIBS)
