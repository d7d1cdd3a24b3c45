#!/usr/bin/env bash
# A local single-node Kubernetes cluster with Outrigger installed, in the foreground (Ctrl-C stops it
# and removes everything it created).
#   npm run cluster -- [--kubeconfig PATH] [--no-install] [--teardown]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/node-env.sh
bash tools/setup.sh
bash tools/cluster/setup-cluster.sh
exec node --import tsx --conditions development tools/cluster/cluster.ts "$@"
