#!/usr/bin/env bash
# Built from the module in go.mod, cached under <cache>/registry/ (see tools/toolchain/go-build.sh for
# <cache>); prints the directory:
#   tools/registry/build.sh            the CNCF Distribution registry (its cmd/registry), into <version>-<go.sum hash>/
#   tools/registry/build.sh htpasswd   our htpasswd line maker (bcrypt, the registry's only hash), into htpasswd-<source hash>/
set -euo pipefail
cd "$(dirname "$0")"
source ../toolchain/go-build.sh
case ${1:-} in
  '')
    version=$(sed -n "s#^\tgithub.com/distribution/distribution/v3 \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
    go_build_cached "$(cache_root)/registry/$version-$(content_key go.sum)" "" "-s -w -X github.com/distribution/distribution/v3/version.version=$version" registry=github.com/distribution/distribution/v3/cmd/registry
    ;;
  htpasswd) go_build_cached "$(cache_root)/registry/htpasswd-$(content_key go.sum htpasswd/main.go)" "" "-s -w" htpasswd=./htpasswd ;;
  *) echo "usage: tools/registry/build.sh [htpasswd]" >&2; exit 2 ;;
esac
