#!/usr/bin/env bash
# The CNCF Distribution registry (cmd/registry of the module pinned in go.mod), from the Go module proxy,
# cached under <cache>/registry/<version>-<go.sum hash>/ (see tools/toolchain/go-build.sh for <cache>).
# Prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../toolchain/go-build.sh
version=$(sed -n "s#^\tgithub.com/distribution/distribution/v3 \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
go_build_cached "$(cache_root)/registry/$version-$(content_key go.sum)" "" "-s -w -X github.com/distribution/distribution/v3/version.version=$version" registry=github.com/distribution/distribution/v3/cmd/registry
