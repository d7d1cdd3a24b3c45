#!/usr/bin/env bash
# The test command (README, CI): lint, typecheck, unit tests, build and e2e suites against a real
# kube-apiserver, for every project. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export NX_NO_CLOUD=true NX_TUI=false NX_DAEMON=false
npx nx run-many -t lint typecheck test build e2e --outputStyle=static "$@"
