#!/usr/bin/env bash
# Builds the images (tools/images/build.sh) and pushes the named ones to a registry with buildah, under
# one hold of the image cache's lock (so that a concurrent build cannot replace them in between), and
# prints one line per image pushed:
#   <name> <repository>@<digest>
#   tools/images/push.sh REPOSITORY_PREFIX TAG CERT_DIR NAME...     (CERT_DIR may be '')
# NAME (e.g. injector) goes to REPOSITORY_PREFIX/NAME:TAG, taken from the archive build.sh made of
# localhost/outrigger/NAME:local. CERT_DIR holds the registry's CA (*.crt); credentials, if any, come
# from a containers auth file named by REGISTRY_AUTH_FILE (never a command line).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: tools/images/push.sh REPOSITORY_PREFIX TAG CERT_DIR NAME..." >&2; exit 2; }
prefix=$1 tag=$2 cert_dir=$3
shift 3
cd "$(dirname "$0")/../.."
source tools/toolchain/go-build.sh
source tools/images/storage.sh
built=$(bash tools/images/build.sh)
options=(--quiet --retry 0 --digestfile "$work/digest")
[ -n "$cert_dir" ] && options+=(--cert-dir "$cert_dir")
[ -n "${REGISTRY_AUTH_FILE:-}" ] && options+=(--authfile "$REGISTRY_AUTH_FILE")
for name in "$@"; do
  archive=$(awk -v ref="localhost/outrigger/$name:local" '$1 == ref { print $2 }' <<<"$built")
  [ -n "$archive" ] || { echo "tools/images/build.sh built no localhost/outrigger/$name:local" >&2; exit 1; }
  id=$(b pull --quiet "docker-archive:$archive")
  say "pushing $prefix/$name:$tag"
  b push "${options[@]}" "$id" "docker://$prefix/$name:$tag" >&2
  echo "$name $prefix/$name@$(cat "$work/digest")"
done
