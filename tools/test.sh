#!/usr/bin/env bash
# The test command (README, CI): lint, typecheck, unit tests, build, the e2e suites against a real
# kube-apiserver, and the real-cluster suite (e2e/cluster, root) for every project. Installs what it
# needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/node-env.sh
bash tools/setup.sh
bash tools/setup-cluster.sh
export NX_NO_CLOUD=true NX_TUI=false NX_DAEMON=false
npx nx run-many -t lint typecheck test build e2e --outputStyle=static "$@"
