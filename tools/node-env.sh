# Sourced by the repository's scripts (source tools/node-env.sh): puts the project's Node (.nvmrc)
# and npm first on PATH, installing them first when the machine's Node is another major.
outrigger_node_bin=$(bash "$(dirname "${BASH_SOURCE[0]}")/node-install.sh") || return 1
if [ -n "$outrigger_node_bin" ] && [[ ":$PATH:" != *":$outrigger_node_bin:"* ]]; then
  export PATH="$outrigger_node_bin:$PATH"
fi
