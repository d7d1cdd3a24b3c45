#!/usr/bin/env bash
# Builds containerd, its runc shim and ctr from the Go modules pinned in go.mod, once per version,
# into <cache>/containerd/<version>/ (tools/toolchain/go-build.sh), and prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n 's#^\tgithub.com/containerd/containerd/v2 \(v[^ ]*\).*#\1#p' go.mod | head -n 1)
dir="$(cache_root)/containerd/$version"
# Static, without cgo: the snapshotters that need C libraries or devices are left out (overlayfs and native remain).
tags="no_btrfs no_devmapper no_zfs"
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$version"
go_build_cached "$dir" "$tags" "$ldflags" \
  containerd=github.com/containerd/containerd/v2/cmd/containerd \
  ctr=github.com/containerd/containerd/v2/cmd/ctr >/dev/null
# As upstream builds it: the shim, one per pod, speaks ttrpc only.
go_build_cached "$dir" "$tags no_grpc" "$ldflags" \
  containerd-shim-runc-v2=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
