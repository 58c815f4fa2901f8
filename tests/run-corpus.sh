#!/bin/sh
# run-corpus.sh - make check: run every corpus case through the prover.
set -u
src=${PV_SRCDIR:-$(dirname "$0")/..}
bld=${PV_BUILDDIR:-.}
exec "$bld/proviso" corpus run "$src/corpus"
