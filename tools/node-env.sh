# Sourced by the repository's scripts (source tools/node-env.sh): puts the project's Node (.nvmrc)
# and npm first on PATH, installing them first when the machine's Node is another major.
outrigger_node_bin=$(bash "$(dirname "${BASH_SOURCE[0]}")/toolchain/node-install.sh") || return 1
if [ -n "$outrigger_node_bin" ] && [[ ":$PATH:" != *":$outrigger_node_bin:"* ]]; then
  export PATH="$outrigger_node_bin:$PATH"
  # An outer `npm run` under the machine's Node exported its paths; what reads them gets the pinned ones.
  if [ -n "${npm_node_execpath:-}" ]; then
    export NODE="$outrigger_node_bin/node" npm_node_execpath="$outrigger_node_bin/node"
    export npm_execpath="$outrigger_node_bin/../lib/node_modules/npm/bin/npm-cli.js"
  fi
fi
