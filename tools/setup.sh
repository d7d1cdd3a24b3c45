#!/usr/bin/env bash
# Installs what the demo and the tests need on a fresh clone: npm dependencies and the
# control-plane binaries (built from Go modules once, then cached). Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`Node >= 20.19 is required, found ${process.version}`); process.exit(1) }'
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Not `npm ci`: the registry mirror this was locked against lacks @swc/core's other-platform
  # binaries, so npm ci refuses the lock file; npm install honours the lock and leaves it unchanged.
  echo "==> installing npm dependencies"
  npm install --no-audit --no-fund --loglevel=error
fi
if ! command -v go >/dev/null; then
  echo "Go (>= $(sed -n 's/^go //p' tools/kube/go.mod)) is required to build the local Kubernetes control plane, and none is on PATH." >&2
  echo "Install it, or point OUTRIGGER_KUBE_BIN at a directory holding kube-apiserver, etcd and kubectl." >&2
  [ -n "${OUTRIGGER_KUBE_BIN:-${KUBEBUILDER_ASSETS:-}}" ] || exit 1
fi
if [ -z "${OUTRIGGER_KUBE_BIN:-${KUBEBUILDER_ASSETS:-}}" ]; then
  echo "==> control-plane binaries: $(tools/kube/build.sh)"
fi
