#!/usr/bin/env bash
# The agent's footprint beside the alternatives: image size, idle RSS (after 3 s, no job run) and
# the time from start to /readyz answering, for the Go agent, the TypeScript prototype on the
# project's Node image, and the stand-in agent. Run after tools/images/build.sh (it reads the
# image archives). Prints a Markdown table. Times depend on the machine's load: read them idle.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source tools/toolchain/go-build.sh
source tools/node-env.sh >/dev/null
images="$(cache_root)/images"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

export GOTOOLCHAIN=local CGO_ENABLED=0
(cd apps/xxl-agent && go build -trimpath -ldflags "-s -w" -o "$work/xxl-agent" . && go build -o "$work/fake-kube" ./cmd/fake-kube)
mkdir -p "$work/sa"
"$work/fake-kube" "$work/sa" token > "$work/kube-url" &
pids+=($!)
while [ ! -s "$work/kube-url" ]; do sleep 0.05; done

# The uncompressed image (the archive's layers), in MB.
image_mb() { local a; a=$(ls "$images/$1"-*.tar 2>/dev/null | head -n 1); [ -n "$a" ] && awk -v b="$(stat -c %s "$a")" 'BEGIN { printf "%.1f", b / 1e6 }' || echo "n/a (run tools/images/build.sh)"; }

# measure NAME PORT COMMAND...: starts it, times /readyz (or the port answering), reads VmRSS after 3 s.
measure() {
  local name=$1 port=$2 start ready pid rss
  shift 2
  start=$(date +%s%N)
  "$@" > "$work/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  until curl -s -o /dev/null "http://127.0.0.1:$port/readyz"; do
    kill -0 "$pid" 2>/dev/null || { echo "$name exited: $(tail -n 3 "$work/$name.log")" >&2; return 1; }
    sleep 0.005
  done
  ready=$(( ($(date +%s%N) - start) / 1000000 ))
  sleep 3
  rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")
  # measure runs in a subshell (process substitution): the trap's list never sees this PID.
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$rss $ready"
}

export XXL_JOB_ADDR=http://127.0.0.1:9/xxl-job-admin XXL_JOB_NAME=footprint XXL_JOB_ACCESS_TOKEN=token NAMESPACE=ns POD_NAME=pod \
  CONTAINER_NAME=app POD_IP=127.0.0.1 XXL_AGENT_KUBE_API="$(cat "$work/kube-url")" XXL_AGENT_SERVICE_ACCOUNT_DIR="$work/sa" XXL_AGENT_DATA_DIR="$work/data"
read -r go_rss go_ready < <(PORT=19991 measure go 19991 "$work/xxl-agent")
read -r ts_rss ts_ready < <(PORT=19992 measure ts 19992 node apps/xxl-agent/footprint/ts-prototype.ts)
# The stand-in reads the in-cluster token path: give it one in a private mount namespace.
standin=$(bash tools/kube/build.sh stand-in-agent | tail -n 1)/stand-in-agent
kube=$(cat "$work/kube-url"); kube=${kube#https://}
read -r si_rss _ < <(PORT=19993 KUBERNETES_SERVICE_HOST=${kube%:*} KUBERNETES_SERVICE_PORT=${kube##*:} measure stand-in 19993 \
  unshare -m --propagation private sh -c 'mount -t tmpfs none /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
    cp "$0"/token "$0"/ca.crt /run/secrets/kubernetes.io/serviceaccount/ && exec "$1"' "$work/sa" "$standin")
echo "| agent | image (MB, uncompressed) | idle RSS (MiB) | ready after start (ms) |"
echo "| --- | --- | --- | --- |"
echo "| xxl-agent (Go, standard library) | $(image_mb xxl-agent) | $go_rss | $go_ready |"
echo "| TypeScript prototype on the Node image | $(image_mb node) | $ts_rss | $ts_ready |"
echo "| stand-in agent (Go, client-go) | $(image_mb stand-in-agent) | $si_rss | n/a (no /readyz; port answering) |"
