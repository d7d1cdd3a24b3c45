#!/usr/bin/env bash
# Prometheus tooling for the observability tests, from Go modules fetched through the Go module proxy,
# cached under <cache>/prometheus/ (see tools/toolchain/go-build.sh for <cache>):
#   tools/observability/prometheus/build.sh        promtool (cmd/promtool of the module pinned in go.mod), into <version>-<go.sum hash>/
#   tools/observability/prometheus/build.sh crds   the Prometheus Operator's CRDs (example/prometheus-operator-crd/ of its module), into operator-<version>/crds/
# Prints that directory (its last line).
set -euo pipefail
cd "$(dirname "$0")"
source ../../toolchain/go-build.sh
# The operator's CRDs are data, not a Go dependency of promtool: pinned here, not in go.mod.
operator=v0.85.0
root="$(cache_root)/prometheus"
if [ "${1:-}" = crds ]; then
  dir="$root/operator-$operator/crds"
  if [ ! -d "$dir" ]; then
    export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
    module=$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$operator" | sed -n 's#^\t"Dir": "\(.*\)",$#\1#p')
    [ -d "$module/example/prometheus-operator-crd" ] || { echo "no example/prometheus-operator-crd in $module" >&2; exit 1; }
    # Complete or absent: copied beside, then renamed.
    mkdir -p "$root/operator-$operator"
    tmp=$(mktemp -d "$root/operator-$operator/.crds.XXXXXX")
    cp "$module"/example/prometheus-operator-crd/monitoring.coreos.com_{servicemonitors,prometheusrules}.yaml "$tmp/"
    chmod u+w "$tmp"/*.yaml
    mv "$tmp" "$dir"
  fi
  echo "$dir"
  exit 0
fi
version=$(sed -n "s#^\tgithub.com/prometheus/prometheus \(v[^ ]*\).*#\1#p" go.mod | head -n 1)
# Our tests check rules and metrics only: without the service discoveries (Prometheus's own build tag) it compiles in under half the time.
go_build_unoptimised_cached "$root/$version-$(content_key go.sum)" remove_all_sd "-s -w" promtool=github.com/prometheus/prometheus/cmd/promtool
