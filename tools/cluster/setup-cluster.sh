#!/usr/bin/env bash
# Installs the Debian packages the local cluster (and its suites: iptables and iproute2 act in pods' network namespaces), the image builds, the XXL-JOB protocol driver
# (apps/xxl-agent/compat: Maven, JDK 17) and the agent's race-detected tests (gcc) need (root; Debian or Ubuntu).
# Everything else (Kubernetes, containerd, CoreDNS) is built from Go modules by tools/*/build.sh.
set -euo pipefail
packages=(buildah runc mmdebstrap containernetworking-plugins iptables iproute2 busybox-static uidmap curl maven openjdk-17-jdk-headless gcc libc6-dev)
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "The local cluster needs these Debian packages: ${missing[*]}. Install them as root (apt-get install ${missing[*]})." >&2
  exit 1
fi
echo "==> installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
