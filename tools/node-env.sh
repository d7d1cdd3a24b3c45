# Sourced by the repository's scripts (source tools/node-env.sh): puts the project's Node (.nvmrc)
# first on PATH. When the machine's Node is older than that major, the pinned version is installed
# from the npm registry (package node-linux-<arch>) into <cache>/node/<version>/ once.
outrigger_node_version=$(cat "$(dirname "${BASH_SOURCE[0]}")/../.nvmrc")
outrigger_node_dir="${OUTRIGGER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outrigger}/node/$outrigger_node_version"
if [ -x "$outrigger_node_dir/bin/node" ]; then
  export PATH="$outrigger_node_dir/bin:$PATH"
elif [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt "${outrigger_node_version%%.*}" ]; then
  case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no Node $outrigger_node_version package for $(uname -m): install Node ${outrigger_node_version%%.*} yourself" >&2; exit 1 ;; esac
  command -v npm >/dev/null || { echo "Node $outrigger_node_version is required and no npm is on PATH to fetch it: install Node ${outrigger_node_version%%.*}" >&2; exit 1; }
  echo "==> installing Node $outrigger_node_version (npm package node-linux-$arch) into $outrigger_node_dir" >&2
  mkdir -p "$(dirname "$outrigger_node_dir")"
  outrigger_tmp=$(mktemp -d "$outrigger_node_dir.XXXXXX")
  (cd "$outrigger_tmp" && npm pack --silent "node-linux-$arch@$outrigger_node_version" >/dev/null && tar -xzf "node-linux-$arch-$outrigger_node_version.tgz" && mkdir bin && mv package/bin/node bin/node && rm -rf package ./*.tgz)
  # Appears only when complete: an interrupted install is never used.
  mv "$outrigger_tmp" "$outrigger_node_dir"
  export PATH="$outrigger_node_dir/bin:$PATH"
fi
