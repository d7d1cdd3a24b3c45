#!/usr/bin/env bash
# actionlint (cmd/actionlint of the module pinned in go.mod), from the Go module proxy, cached under
# <cache>/actionlint/<version>-<go.sum hash>/ (see tools/toolchain/go-build.sh for <cache>). Prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n "s#^\tgithub.com/rhysd/actionlint \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
go_build_unoptimised_cached "$(cache_root)/actionlint/$version-$(content_key go.sum)" "" "-s -w -X github.com/rhysd/actionlint.version=$version" actionlint=github.com/rhysd/actionlint/cmd/actionlint
