#!/usr/bin/env bash
# Helm (cmd/helm of the module pinned in go.mod), from the Go module proxy, cached under
# <cache>/helm/<version>-<go.sum hash>/ (see tools/toolchain/go-build.sh for <cache>). Prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n "s#^\thelm.sh/helm/v4 \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
go_build_unoptimised_cached "$(cache_root)/helm/$version-$(content_key go.sum)" "" "-s -w -X helm.sh/helm/v4/internal/version.version=$version" helm=helm.sh/helm/v4/cmd/helm
