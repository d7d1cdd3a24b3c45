#!/usr/bin/env bash
# Builds containerd, its runc shim and ctr from the Go modules pinned in go.mod, once per version,
# into <cache>/containerd/<version>/ (tools/go-build.sh), and prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../go-build.sh
version=$(sed -n 's#^\tgithub.com/containerd/containerd/v2 \(v[^ ]*\).*#\1#p' go.mod | head -n 1)
# Static, without cgo: the snapshotters that need C libraries are left out (overlayfs and native remain).
tags="no_btrfs no_devmapper no_zfs no_aufs"
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$version"
go_build_cached "$(cache_root)/containerd/$version" "$tags" "$ldflags" \
  containerd=github.com/containerd/containerd/v2/cmd/containerd \
  containerd-shim-runc-v2=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  ctr=github.com/containerd/containerd/v2/cmd/ctr
