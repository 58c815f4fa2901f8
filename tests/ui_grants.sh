#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ui_grants.sh - make check: the reviewer inbox shows what a change grants
# first, with its breadth, and the policy diff a line each, classed by its
# mark (tests/ui/grants.mjs, node without a browser).
# SKIPS (77) without node.
: "${PV_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed"; exit 77; }
exec node "$PV_SRCDIR/tests/ui/grants.mjs" "$PV_SRCDIR/advisor/ui/app.js"
