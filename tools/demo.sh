#!/usr/bin/env bash
# The demo: installs what it needs, starts a local control plane and Outrigger on it (Ctrl-C stops all).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exec npx tsx --conditions development tools/control-plane.ts "$@"
