#!/usr/bin/env bash
# Prints the bin directory of the project's Node (.nvmrc) and npm, or nothing when the Node on PATH
# is already that major. The pinned Node (npm package node-linux-<arch>) and npm come from the npm
# registry into <cache>/node/<version>/ once. Used by tools/node-env.sh.
set -euo pipefail
node_version=$(cat "$(dirname "$0")/../../.nvmrc")
# Also the local base image's npm: tools/images/build.sh reads it here.
npm_version=11.21.2
dir="${OUTRIGGER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outrigger}/node/$node_version"
# The npm version is part of what a complete install holds, so changing the pin installs again.
complete="$dir/lib/node_modules/npm-$npm_version"
if [ -e "$complete" ]; then echo "$dir/bin"; exit 0; fi
if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "${node_version%%.*}" ]; then exit 0; fi

case $(uname -sm) in
  'Linux x86_64') arch=x64 ;;
  'Linux aarch64') arch=arm64 ;;
  *) echo "the npm registry has no Node package for $(uname -sm): install Node ${node_version%%.*} yourself" >&2; exit 1 ;;
esac
command -v npm >/dev/null || { echo "Node ${node_version%%.*} is required, and there is no npm on PATH to fetch it with: install Node ${node_version%%.*}" >&2; exit 1; }
echo "==> installing Node $node_version and npm $npm_version (npm registry) into $dir" >&2
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$dir.tmp.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.old"' EXIT
cd "$tmp"
npm pack --silent "node-linux-$arch@$node_version" "npm@$npm_version" >/dev/null
mkdir -p bin lib/node_modules/npm
tar -xzf "node-linux-$arch-$node_version.tgz" --strip-components=2 -C bin package/bin/node
tar -xzf "npm-$npm_version.tgz" --strip-components=1 -C lib/node_modules/npm
rm ./*.tgz
for cli in npm npx; do
  printf '#!/bin/sh\nbin=$(dirname "$0")\nexec "$bin/node" "$bin/../lib/node_modules/npm/bin/%s-cli.js" "$@"\n' "$cli" >"bin/$cli"
done
chmod 755 . bin/*
bin/node -e 0 && bin/npm --version >/dev/null
touch "lib/node_modules/npm-$npm_version"
# Appears only when complete (an interrupted install is never used); replaces an older install.
if [ -e "$dir" ]; then mv -T "$dir" "$tmp.old"; fi
mv -T "$tmp" "$dir"
echo "$dir/bin"
