# The command-line grammar of every executable and the installed tree.
INSTALL_TESTS = tests/cli_grammar.sh tests/install.sh
TESTS += $(INSTALL_TESTS)
EXTRA_DIST += $(INSTALL_TESTS)
