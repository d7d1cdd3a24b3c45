#!/usr/bin/env bash
# The demo: installs what it needs, starts a local single-node cluster (root), installs Outrigger from
# deploy/overlays/local with images built from this repository, runs an annotated Deployment and shows
# its agent at work. Ctrl-C stops everything and removes what it created.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/node-env.sh
bash tools/setup.sh
bash tools/cluster/setup-cluster.sh
exec node --import tsx --conditions development tools/cluster/demo.ts "$@"
