#!/usr/bin/env bash
# Builds kube-apiserver, etcd and kubectl from the Go modules pinned in go.mod, once per version,
# into ~/.cache/outrigger/kube/<kube>-etcd<etcd>/ (OUTRIGGER_CACHE_DIR overrides ~/.cache/outrigger).
# Prints the directory holding the binaries on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

command -v go >/dev/null || { echo "build.sh: Go is required to build the control plane (https://go.dev/dl); none on PATH" >&2; exit 1; }
version() { sed -n "s#^\t$1 \(v[^ ]*\).*#\1#p" go.mod | head -n 1; }
kube=$(version k8s.io/kubernetes)
etcd=$(version go.etcd.io/etcd/server/v3)
dir="${OUTRIGGER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outrigger}/kube/$kube-etcd$etcd"
bins=(kube-apiserver etcd kubectl)

have_all() { for b in "${bins[@]}"; do [ -x "$dir/$b" ] || return 1; done; }
if have_all; then echo "$dir"; exit 0; fi

echo "building control plane: kubernetes $kube, etcd $etcd -> $dir (a cold build takes several minutes)" >&2
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
minor=${kube#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
start=$SECONDS
echo "  downloading modules" >&2
go mod download
# One go build per binary keeps the progress readable; the build cache shares the common packages.
for pkg in k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kubectl; do
  name=$(basename "$pkg"); [ "$name" = v3 ] && name=etcd
  echo "  compiling $name ($((SECONDS - start))s elapsed)" >&2
  # kube-apiserver alone compiles for minutes: say we are alive every 30 s.
  began=$(date +%s)
  (while sleep 30; do echo "  still compiling $name ($(( $(date +%s) - began ))s)" >&2; done) &
  ticker=$!
  status=0
  go build -trimpath -ldflags "$ldflags" -o "$tmp/$name" "$pkg" || status=$?
  kill "$ticker" 2>/dev/null || true
  [ "$status" -eq 0 ] || exit "$status"
done
# Binaries appear in the cache only once all are built, so an interrupted build is never reused.
for b in "${bins[@]}"; do mv "$tmp/$b" "$dir/$b"; done
echo "  done in $((SECONDS - start))s" >&2
echo "$dir"
