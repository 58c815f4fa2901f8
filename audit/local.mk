# audit/ - the tamper-evident decision record: canonical records, Ed25519
# seals, the export's verifier. jansson and libcrypto only, so both the
# advisor (which signs) and the proviso command (which verifies) link it.
noinst_LTLIBRARIES += audit/libaudit.la
audit_libaudit_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS)
audit_libaudit_la_SOURCES = audit/audit.h audit/audit_int.h audit/audit_key.c \
	audit/audit_chain.c audit/audit_state.c
AUDIT_LIBS = audit/libaudit.la common/libcommon.la $(JANSSON_LIBS) $(CRYPTO_LIBS) $(PTHREAD_LIBS)
