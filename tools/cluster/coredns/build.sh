#!/usr/bin/env bash
# Builds the local cluster's CoreDNS (main.go: CoreDNS with only cluster-DNS plugins) into
# <cache>/coredns/<version>-<source hash>/ (tools/toolchain/go-build.sh), and prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n 's#.*github.com/coredns/coredns \(v[^ ]*\).*#\1#p' go.mod | head -n 1)
go_build_cached "$(cache_root)/coredns/$version-$(content_key main.go go.sum)" "" "-s -w" coredns=.
