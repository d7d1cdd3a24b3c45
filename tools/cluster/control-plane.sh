#!/usr/bin/env bash
# Starts a local etcd + kube-apiserver in the foreground (Ctrl-C stops it).
#   npm run control-plane -- [--kubeconfig PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/node-env.sh
bash tools/setup.sh
exec node --import tsx --conditions development tools/cluster/control-plane.ts "$@"
