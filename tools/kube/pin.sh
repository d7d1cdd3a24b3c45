#!/usr/bin/env bash
# Re-pins a Kubernetes wrapper module to a release:
#   tools/kube/pin.sh v1.36.3 v3.6.8    the control plane and node (tools/kube): Kubernetes and etcd
#   tools/kube/pin.sh --floor v1.30.14  the oldest supported kube-apiserver (tools/kube/floor), whose
#                                       minor must be MINIMUM_KUBERNETES (libs/install)
# k8s.io/kubernetes points its staging modules at ./staging/src, which does not exist outside its
# own repo, so every staging module needs a replace to the published v0.x.y of the same release.
# The list is derived from the release's own go.mod, never typed by hand.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = --floor ]; then
  kube=${2:?kubernetes version, e.g. v1.30.14}
  cd floor
  module=outrigger.dev/tools/kube/floor tools=(kube-apiserver) etcd=
else
  kube=${1:?kubernetes version, e.g. v1.36.3}
  etcd=${2:?etcd version, e.g. v3.6.8}
  module=outrigger.dev/tools/kube tools=(kube-apiserver kube-controller-manager kube-proxy kube-scheduler kubectl kubelet)
fi
staging=v0.${kube#v1.}
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

upstream=$(go mod download -json "k8s.io/kubernetes@$kube" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
{
  printf 'module %s\n\ngo %s\n\n' "$module" "$(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1.0/')"
  printf 'tool (\n'
  [ -z "$etcd" ] || printf '\tgo.etcd.io/etcd/server/v3\n'
  printf '\tk8s.io/kubernetes/cmd/%s\n' "${tools[@]}"
  printf ')\n\nrequire (\n'
  [ -z "$etcd" ] || printf '\tgo.etcd.io/etcd/server/v3 %s\n' "$etcd"
  printf '\tk8s.io/kubernetes %s\n)\n\nreplace (\n' "$kube"
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$upstream"
  printf ')\n'
} > go.mod
go mod tidy
echo "pinned $module to kubernetes $kube (staging $staging)${etcd:+, etcd $etcd}"
