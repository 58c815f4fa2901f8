#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# dist_files.sh SRCDIR DISTDIR - `make distcheck`'s hook: every file git
# tracks in SRCDIR is in the unpacked tarball DISTDIR, but .gitignore. So
# a script, a test's data or a document that EXTRA_DIST forgot fails the
# distcheck even when no test that distcheck runs reads it (.ci/run's
# distcheck runs the unit programs, the corpus and the install test; the
# whole suite ran on the same sources before it). Without git, or outside
# a git work tree (a distcheck of a tarball), there is nothing to compare.
set -u
src=$1
dist=$2
if ! command -v git >/dev/null 2>&1 ||
    ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "dist_files.sh: $src is not a git work tree; nothing to compare"
    exit 0
fi
missing=$(git -C "$src" ls-files | while IFS= read -r f; do
    case "$f" in .gitignore | */.gitignore) continue ;; esac
    [ -e "$dist/$f" ] || echo "$f"
done)
if [ -n "$missing" ]; then
    echo "dist_files.sh: tracked files missing from the tarball (add them to EXTRA_DIST):"
    echo "$missing" | sed 's/^/  /'
    exit 1
fi
echo "dist_files.sh: every tracked file is in the tarball ($(git -C "$src" ls-files | wc -l) files)"
