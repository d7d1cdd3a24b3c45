#!/usr/bin/env bash
# The protocol compatibility driver: builds the agent and the fake exec target, then runs the
# Maven tests that drive the agent with xxl-job-core's own client.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
go build -trimpath -o "$bin/xxl-agent" .
go build -trimpath -o "$bin/fake-kube" ./cmd/fake-kube
cd compat
mvn -B --no-transfer-progress test -Dtest=ExecutorProtocolCompatTest -Dagent.bin="$bin/xxl-agent" -Dfakekube.bin="$bin/fake-kube"
