noinst_LTLIBRARIES += common/libcommon.la
common_libcommon_la_SOURCES = common/pv.h common/pv_error.c common/pv_dynbuf.h \
	common/pv_dynbuf.c common/pv_log.h common/pv_log.c common/pv_text.h common/pv_text.c \
	common/pv_args.h common/pv_args.c common/pv_file.h common/pv_file.c \
	common/pv_hash.h common/pv_hash.c common/pv_token.h common/pv_token.c \
	common/pv_notify.h common/pv_notify.c \
	common/pv_settings.h common/pv_settings.c common/pv_time.h
