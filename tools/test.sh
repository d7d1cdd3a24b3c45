#!/usr/bin/env bash
# The test command (README, CI): lint, typecheck, unit tests, build, the e2e suites against a real
# kube-apiserver (the services' admission, watch and RBAC suites again on the oldest supported one,
# e2e-floor), and the real-cluster suite (e2e/cluster, root) for every project. Installs what it
# needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/node-env.sh
bash tools/setup.sh
bash tools/cluster/setup-cluster.sh
export NX_NO_CLOUD=true NX_TUI=false NX_DAEMON=false
log=$(mktemp -t outrigger-test.XXXXXX)
# On a fresh machine the later suites' tools compile beside the earlier suites (a failed build there is the suite's to report).
bash tools/prebuild.sh &
prebuild=$!
trap 'kill "$prebuild" 2>/dev/null || true; wait "$prebuild" 2>/dev/null || true; rm -f "$log"' EXIT
if npx nx run-many -t lint typecheck test build e2e e2e-floor --outputStyle=static "$@" 2>&1 | tee "$log"; then exit 0; fi
# CI keeps only the end of the output: repeat each failure where it will be read.
echo
echo "=== failures (repeated from above) ==="
grep -a -A 12 -E 'FAIL |Error:|error TS|✖|[0-9]+ problems?' "$log" | sed 's/\x1b\[[0-9;]*m//g' | head -n 300
exit 1
