# real clients through proviso-proxy (git, pip, npm, Python requests, curl
# with HTTP/2 offered) against the HTTPS upstream tests/e2e/clients_upstream.py
# on 127.0.0.1; the proxy's test helpers come from tests/proxy.mk.
CLIENTS_E2E = tests/e2e/clients_git.sh tests/e2e/clients_pkg.sh tests/e2e/clients_loop.sh
TESTS += $(CLIENTS_E2E)
EXTRA_DIST += $(CLIENTS_E2E) tests/e2e/clients_lib.sh tests/e2e/clients_upstream.py
