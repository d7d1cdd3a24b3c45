#!/usr/bin/env bash
# The demo: installs what it needs, builds the three services, starts a local control plane and
# Outrigger on it, creates an annotated pod and shows what happened. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
echo "==> building the services"
NX_NO_CLOUD=true NX_TUI=false NX_DAEMON=false npx nx run-many -t build -p injector,rbac-syncer,cert-manager --outputStyle=static >/dev/null
exec node --import tsx --conditions development tools/demo.ts "$@"
