#!/usr/bin/env bash
# Builds Kubernetes binaries from the Go modules pinned in go.mod, once per version, into
# <cache>/kube/<kube>-etcd<etcd>/ (see tools/toolchain/go-build.sh for <cache>), and prints that directory.
#   tools/kube/build.sh [NAME...]   default: kube-apiserver etcd kubectl (the bare control plane)
# NAME: kube-apiserver etcd kubectl kubelet kube-scheduler kube-controller-manager kube-proxy, or our
# own programs under cmd/ (pause stand-in-agent agnhost-webhook informer-peer policy-typecheck), cached by their sources in <cache>/programs/<hash>/.
#   tools/kube/build.sh floor       the oldest supported kube-apiserver (floor/go.mod), into <cache>/kube/<kube>-floor/
#   tools/kube/build.sh floor policy-typecheck   cmd/policy-typecheck on that version's types and CEL, into <cache>/programs/<hash>-floor/
set -euo pipefail
cd "$(dirname "$0")"
source ../toolchain/go-build.sh

version() { sed -n "s#^\t$1 \(v[^ ]*\).*#\1#p" go.mod | head -n 1; }
# kubelet reports this version to the API server; kubectl and the API server print it.
ldflags() {
  local minor=${1#v1.}
  echo "-s -w -X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
}
if [ "${1:-}" = floor ]; then
  cd floor
  if [ -n "${2:-}" ]; then
    [ "$2" = policy-typecheck ] || { echo "tools/kube/build.sh: floor builds kube-apiserver or policy-typecheck, not '$2'" >&2; exit 2; }
    # Its one file, compiled by path against this module's versions.
    go_build_cached "$(cache_root)/programs/$(content_key go.sum ../cmd/policy-typecheck/main.go)-floor" "" "-s -w" policy-typecheck=../cmd/policy-typecheck/main.go
    exit 0
  fi
  kube=$(version k8s.io/kubernetes)
  [ -x "$(cache_root)/kube/$kube-floor/kube-apiserver" ] || echo "building kube-apiserver $kube (a cold build takes several minutes)" >&2
  go_build_cached "$(cache_root)/kube/$kube-floor" "" "$(ldflags "$kube")" kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver
  exit 0
fi
kube=$(version k8s.io/kubernetes)
etcd=$(version go.etcd.io/etcd/server/v3)
ldflags=$(ldflags "$kube")

specs=()
ours=()
for name in "${@:-kube-apiserver etcd kubectl}"; do
  for n in $name; do
    case $n in
      etcd) specs+=("etcd=go.etcd.io/etcd/server/v3") ;;
      kube-apiserver|kubectl|kubelet|kube-scheduler|kube-controller-manager|kube-proxy) specs+=("$n=k8s.io/kubernetes/cmd/$n") ;;
      pause|stand-in-agent|agnhost-webhook|informer-peer|policy-typecheck) ours+=("$n=./cmd/$n") ;;
      *) echo "tools/kube/build.sh: unknown binary '$n'" >&2; exit 2 ;;
    esac
  done
done
if [ ${#ours[@]} -gt 0 ]; then
  [ ${#specs[@]} -eq 0 ] || { echo "tools/kube/build.sh: build our programs (${ours[*]%%=*}) apart from Kubernetes binaries" >&2; exit 2; }
  go_build_cached "$(cache_root)/programs/$(content_key go.sum cmd/*/*.go)" "" "-s -w" "${ours[@]}"
  exit 0
fi
dir="$(cache_root)/kube/$kube-etcd$etcd"
[ -x "$dir/${specs[0]%%=*}" ] || echo "building Kubernetes $kube, etcd $etcd -> $dir (a cold build takes several minutes)" >&2
go_build_cached "$dir" "" "$ldflags" "${specs[@]}"
