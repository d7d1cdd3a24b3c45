#!/usr/bin/env bash
# Re-pins the control-plane wrapper module to a Kubernetes release.
# k8s.io/kubernetes points its staging modules at ./staging/src, which does not exist outside its
# own repo, so every staging module needs a replace to the published v0.x.y of the same release.
# The list is derived from the release's own go.mod, never typed by hand.
#   usage: tools/kube/pin.sh v1.36.3 v3.6.8
set -euo pipefail
kube=${1:?kubernetes version, e.g. v1.36.3}
etcd=${2:?etcd version, e.g. v3.6.8}
staging=v0.${kube#v1.}
cd "$(dirname "$0")"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

upstream=$(go mod download -json "k8s.io/kubernetes@$kube" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
{
  printf 'module outrigger.dev/tools/kube\n\ngo %s\n\n' "$(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1.0/')"
  printf 'tool (\n\tgo.etcd.io/etcd/server/v3\n'
  printf '\tk8s.io/kubernetes/cmd/%s\n' kube-apiserver kube-controller-manager kube-proxy kube-scheduler kubectl kubelet
  printf ')\n\n'
  printf 'require (\n\tgo.etcd.io/etcd/server/v3 %s\n\tk8s.io/kubernetes %s\n)\n\nreplace (\n' "$etcd" "$kube"
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$upstream"
  printf ')\n'
} > go.mod
go mod tidy
echo "pinned kubernetes $kube (staging $staging), etcd $etcd"
