#!/usr/bin/env bash
# Jetstack cert-manager for the e2e, from the Go module pinned in go.mod (fetched through the Go
# module proxy), cached under <cache>/jetstack-cert-manager/ (see tools/toolchain/go-build.sh for <cache>):
#   deploy/tests/jetstack/build.sh crds   its CRDs (deploy/crds/*.yaml of the module), copied to <version>/crds/
#   deploy/tests/jetstack/build.sh        jetstack-controller and jetstack-cainjector (cmd/), into <version>-<source hash>/
# Prints that directory (its last line).
set -euo pipefail
cd "$(dirname "$0")"
source ../../../tools/toolchain/go-build.sh
version=$(sed -n 's#^\tgithub.com/cert-manager/cert-manager \(v[^ ]*\).*#\1#p' go.mod | head -n 1)
root="$(cache_root)/jetstack-cert-manager"
if [ "${1:-}" = crds ]; then
  dir="$root/$version/crds"
  if [ ! -d "$dir" ]; then
    export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
    module=$(go mod download -json github.com/cert-manager/cert-manager | sed -n 's#^\t"Dir": "\(.*\)",$#\1#p')
    [ -d "$module/deploy/crds" ] || { echo "no deploy/crds in $module" >&2; exit 1; }
    # Complete or absent: copied beside, then renamed.
    mkdir -p "$root/$version"
    tmp=$(mktemp -d "$root/$version/.crds.XXXXXX")
    cp "$module"/deploy/crds/*.yaml "$tmp/"
    chmod u+w "$tmp"/*.yaml
    mv "$tmp" "$dir"
  fi
  echo "$dir"
  exit 0
fi
go_build_cached "$root/$version-$(content_key go.sum cmd/*/*.go)" "" "-s -w" \
  jetstack-controller=./cmd/jetstack-controller jetstack-cainjector=./cmd/jetstack-cainjector
