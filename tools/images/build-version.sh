#!/usr/bin/env bash
# Prints the version the images carry (the injector stamps it on every pod it injects): the release
# tag at HEAD without its "v" (v1.2.0 -> 1.2.0), else the release version (package.json) with the commit
# as SemVer build metadata (0.1.0+3f2a9c1d0b7e), ".dirty" added when the tree has uncommitted changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:-$here/../..}"
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
  echo "${tag#v}"
  exit 0
fi
package=$(bash "$here/../release/release-version.sh" .)
dirty=$(git diff --quiet HEAD -- 2>/dev/null || echo .dirty)
echo "$package+$(git rev-parse --short=12 HEAD)$dirty"
