# The one HTTP client (libcurl): cli/, advisor/ and proxy/ use it.
noinst_LTLIBRARIES += hclient/libhclient.la
hclient_libhclient_la_SOURCES = hclient/hclient.h hclient/hclient.c
hclient_libhclient_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS)
HCLIENT_LIBS = hclient/libhclient.la common/libcommon.la $(CURL_LIBS)
