#!/usr/bin/env bash
# Prints the release version: package.json's "version" at the workspace root (the one source;
# tools/release/release-version.ts). Plain grep and sed, so the image build and the release
# workflows need nothing beyond the shell.
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
grep -o '"version": *"[^"]*"' package.json | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/'
