# Installed like a Debian tool: man pages, examples in the doc dir, systemd
# units and the bash completion (tests/install.sh checks all of it in a
# DESTDIR, and make distcheck runs that test).

# Man pages are written by hand in roff; the paths in them are filled in
# here so they name the configured directories.
nodist_man_MANS = man/proviso.1 man/proviso-prover.8 man/proviso-advisor.8 man/proviso-proxy.8
MAN_IN = man/proviso.1.in man/proviso-prover.8.in man/proviso-advisor.8.in \
	man/proviso-proxy.8.in
EXTRA_DIST += $(MAN_IN)
CLEANFILES += $(nodist_man_MANS)

# "make install" may run as another user than "make": expand at build time.
SUBST_PATHS = $(SED) -e 's|@VERSION[@]|$(PACKAGE_VERSION)|g' -e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@docdir[@]|$(docdir)|g' -e 's|@systemdsystemunitdir[@]|$(systemdsystemunitdir)|g'

SUBST_RULE = $(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) $(srcdir)/$@.in > $@.tmp && mv $@.tmp $@
man/proviso.1: $(srcdir)/man/proviso.1.in Makefile
	$(SUBST_RULE)
man/proviso-prover.8: $(srcdir)/man/proviso-prover.8.in Makefile
	$(SUBST_RULE)
man/proviso-advisor.8: $(srcdir)/man/proviso-advisor.8.in Makefile
	$(SUBST_RULE)
man/proviso-proxy.8: $(srcdir)/man/proviso-proxy.8.in Makefile
	$(SUBST_RULE)

# The pages the man pages name and every page they link to, beside the
# examples (tests/install.sh holds every link of an installed page to an
# installed page).
dist_doc_DATA = docs/operations.md docs/advisor.md docs/api.md docs/audit.md docs/cli.md \
	docs/proxy.md docs/semantics.md docs/sandbox.md docs/scale-out.md docs/security.md \
	docs/architecture.md

examplesdir = $(docdir)/examples
dist_examples_DATA = examples/policy.yaml examples/proposal.json examples/credentials.yaml \
	examples/boundary.yaml

if HAVE_SYSTEMD_UNITS
systemdsystemunit_DATA = contrib/systemd/proviso-prover.service \
	contrib/systemd/proviso-advisor.service contrib/systemd/proviso-proxy.service \
	contrib/systemd/proviso-proxy@.service
endif
UNIT_IN = contrib/systemd/proviso-prover.service.in \
	contrib/systemd/proviso-advisor.service.in contrib/systemd/proviso-proxy.service.in \
	contrib/systemd/proviso-proxy@.service.in
EXTRA_DIST += $(UNIT_IN)
CLEANFILES += contrib/systemd/proviso-prover.service contrib/systemd/proviso-advisor.service \
	contrib/systemd/proviso-proxy.service contrib/systemd/proviso-proxy@.service
all-local: contrib/systemd/proviso-prover.service contrib/systemd/proviso-advisor.service \
	contrib/systemd/proviso-proxy.service contrib/systemd/proviso-proxy@.service

contrib/systemd/proviso-prover.service: $(srcdir)/contrib/systemd/proviso-prover.service.in Makefile
	$(SUBST_RULE)
contrib/systemd/proviso-advisor.service: $(srcdir)/contrib/systemd/proviso-advisor.service.in \
		Makefile
	$(SUBST_RULE)
contrib/systemd/proviso-proxy.service: $(srcdir)/contrib/systemd/proviso-proxy.service.in Makefile
	$(SUBST_RULE)
contrib/systemd/proviso-proxy@.service: $(srcdir)/contrib/systemd/proviso-proxy@.service.in \
		Makefile
	$(SUBST_RULE)

# One completion file; the servers' names are links to it (bash-completion
# loads completions/NAME for command NAME).
dist_bashcompletion_DATA = contrib/bash-completion/proviso
install-data-hook:
	cd $(DESTDIR)$(bashcompletiondir) && for n in proviso-prover proviso-advisor proviso-proxy; do \
		rm -f $$n && $(LN_S) proviso $$n; done
uninstall-hook:
	cd $(DESTDIR)$(bashcompletiondir) && rm -f proviso-prover proviso-advisor proviso-proxy
