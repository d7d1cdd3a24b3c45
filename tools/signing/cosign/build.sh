#!/usr/bin/env bash
# cosign (cmd/cosign of the module pinned in go.mod), from the Go module proxy, cached under
# <cache>/cosign/<version>-<go.sum hash>/ (see tools/toolchain/go-build.sh for <cache>). Prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n "s#^\tgithub.com/sigstore/cosign/v3 \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
go_build_unoptimised_cached "$(cache_root)/cosign/$version-$(content_key go.sum)" "" "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$version" cosign=github.com/sigstore/cosign/v3/cmd/cosign
