#!/usr/bin/env bash
# syft (cmd/syft of the module pinned in go.mod), the SBOM generator, from the Go module proxy, cached
# under <cache>/syft/<version>-<go.sum hash>/ (see tools/toolchain/go-build.sh for <cache>). Prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n "s#^\tgithub.com/anchore/syft \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
go_build_unoptimised_cached "$(cache_root)/syft/$version-$(content_key go.sum)" "" "-s -w -X main.version=$version" syft=github.com/anchore/syft/cmd/syft
