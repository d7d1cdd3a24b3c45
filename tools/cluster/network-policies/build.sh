#!/usr/bin/env bash
# Builds the local cluster's NetworkPolicy enforcer (main.go: sigs.k8s.io/kube-network-policies'
# controller run from a kubeconfig) into <cache>/network-policies/<version>-<source hash>/
# (tools/toolchain/go-build.sh), and prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
version=$(sed -n 's#.*sigs.k8s.io/kube-network-policies \(v[^ ]*\).*#\1#p' go.mod | head -n 1)
go_build_cached "$(cache_root)/network-policies/$version-$(content_key main.go go.sum)" "" "-s -w" network-policies=.
