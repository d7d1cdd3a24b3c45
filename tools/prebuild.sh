#!/usr/bin/env bash
# Builds, one after another at the lowest priority, the tools and images only the later suites need,
# in the order those suites run (the real node's binaries and the cluster's images, then deploy's and
# the signing suite's counterparts), so that they build while earlier suites wait on their API
# servers rather than in the serial e2e tail: on a fresh machine all of them, on a warm one the
# images of a new commit. tools/test.sh starts it in the background and stops it at its end. Each
# build holds its cache directory's lock (tools/toolchain/go-build.sh, tools/images/storage.sh): a
# suite that needs one meanwhile waits for this build instead of building it a second time.
set -uo pipefail
cd "$(dirname "$0")/.."
child=
# Each build leads its own process group: stopping it stops its compiler or buildah too.
trap '[ -n "$child" ] && kill -- "-$child" 2>/dev/null; exit 143' TERM INT
builds=(
  'tools/kube/build.sh floor' # the services' e2e-floor suites, the first to follow the unit phase
  'tools/kube/build.sh kubelet kube-scheduler kube-controller-manager kube-proxy' # libs/control-plane's NODE_BINARIES
  tools/cluster/containerd/build.sh
  tools/cluster/coredns/build.sh
  tools/cluster/network-policies/build.sh
  tools/registry/build.sh
  tools/images/build.sh
  deploy/tests/jetstack/build.sh
  tools/signing/cosign/build.sh
  tools/signing/syft/build.sh
)
for build in "${builds[@]}"; do
  # In the background, so that a signal interrupts the wait at once. Unquoted: a script and its arguments.
  setsid nice -n 19 bash $build >/dev/null 2>&1 &
  child=$!
  wait "$child"
done
