# sandbox/ - `proviso sandbox run`: namespaces, the new root, Landlock,
# seccomp (libseccomp) and the proxy's process; used by the proviso command
# (docs/sandbox.md). Depends on model/ and common/ only.
noinst_LTLIBRARIES += sandbox/libsandbox.la
sandbox_libsandbox_la_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS)
sandbox_libsandbox_la_SOURCES = sandbox/sandbox.h sandbox/sandbox_int.h \
	sandbox/sandbox_plan.c sandbox/sandbox_root.c sandbox/sandbox_landlock.c \
	sandbox/sandbox_exec.c sandbox/sandbox_env.c sandbox/sandbox_proxy.c sandbox/sandbox_run.c
SANDBOX_LIBS = sandbox/libsandbox.la $(SECCOMP_LIBS)
