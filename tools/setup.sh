#!/usr/bin/env bash
# Installs what the demo and the tests need on a fresh clone: the project's Node and npm when the
# machine's Node is another major (tools/node-env.sh), npm dependencies and the control-plane binaries
# (built from Go modules once, then cached). Safe to run repeatedly; callers source tools/node-env.sh
# themselves so that they run under the same Node.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/node-env.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
if ! command -v go >/dev/null; then
  echo "Go (>= $(sed -n 's/^go //p' tools/kube/go.mod)) is required to build the local Kubernetes control plane, and none is on PATH." >&2
  echo "Install it, or point OUTRIGGER_KUBE_BIN at a directory holding kube-apiserver, etcd and kubectl." >&2
  [ -n "${OUTRIGGER_KUBE_BIN:-${KUBEBUILDER_ASSETS:-}}" ] || exit 1
fi
if [ -z "${OUTRIGGER_KUBE_BIN:-${KUBEBUILDER_ASSETS:-}}" ]; then
  echo "==> control-plane binaries: $(tools/kube/build.sh)"
fi
