# Sourced by the build scripts under tools/: builds Go main packages into a cache directory once,
# and prints that directory (the scripts' stdout contract: its last line). Progress goes to stderr.

# The cache root: OUTRIGGER_CACHE_DIR, else $XDG_CACHE_HOME/outrigger, else ~/.cache/outrigger.
cache_root() { echo "${OUTRIGGER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outrigger}"; }

# go_build_cached DIR TAGS LDFLAGS NAME=PACKAGE...
# Builds, from the module in the current directory, each NAME that DIR lacks; a binary appears in DIR
# only once it is fully built, so an interrupted build is never reused. Prints DIR.
# GO_GCFLAGS, if set, is passed as -gcflags (see go_build_unoptimised_cached).
go_build_cached() {
  local dir=$1 tags=$2 ldflags=$3 spec name pkg status began
  shift 3
  local missing=()
  for spec in "$@"; do [ -x "$dir/${spec%%=*}" ] || missing+=("$spec"); done
  if [ ${#missing[@]} -gt 0 ]; then
    command -v go >/dev/null || { echo "Go is required to build ${missing[*]%%=*} (https://go.dev/dl); none on PATH" >&2; exit 1; }
    # readonly: a build never edits go.mod or go.sum; no VCS stamp: the same sources give the same binary.
    export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
    mkdir -p "$dir"
    # One build per directory at a time (tools/prebuild.sh may be building it already): wait, then build only what is still missing.
    exec {_go_build_lock}>"$dir/.lock"
    flock "$_go_build_lock"
    missing=()
    for spec in "$@"; do [ -x "$dir/${spec%%=*}" ] || missing+=("$spec"); done
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    _go_build_tmp=$(mktemp -d "$dir/.build.XXXXXX") _go_build_pids=""
    # Killed or interrupted: stop the compiler and the ticker too, and leave no partial build behind.
    trap 'kill $_go_build_pids 2>/dev/null; rm -rf "$_go_build_tmp"' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    local start=$SECONDS
    for spec in "${missing[@]}"; do
      name=${spec%%=*}
      pkg=${spec#*=}
      echo "  compiling $name ($((SECONDS - start))s elapsed)" >&2
      began=$SECONDS
      # The large binaries compile for minutes: say we are alive every 30 s (and stop if we are not).
      (while sleep 30 && kill -0 $$ 2>/dev/null; do echo "  still compiling $name ($((SECONDS - began))s)" >&2; done) &
      _go_build_pids=$!
      # In the background, so that a signal interrupts the wait at once and the EXIT trap can stop it.
      go build -trimpath ${GO_GCFLAGS:+"-gcflags=$GO_GCFLAGS"} -tags "$tags" -ldflags "$ldflags" -o "$_go_build_tmp/$name" "$pkg" &
      _go_build_pids+=" $!"
      status=0
      wait $! || status=$?
      # go has exited and been reaped: stop the ticker only, and forget both (their PIDs may be reused).
      kill "${_go_build_pids%% *}" 2>/dev/null || true
      _go_build_pids=""
      [ "$status" -eq 0 ] || exit "$status"
      mv "$_go_build_tmp/$name" "$dir/$name"
    done
    rm -rf "$_go_build_tmp"
    trap - EXIT TERM INT
    echo "  done in $((SECONDS - start))s" >&2
  fi
  # Released for the next caller (a script may build into one directory twice).
  if [ -n "${_go_build_lock:-}" ]; then
    exec {_go_build_lock}>&-
    unset _go_build_lock
  fi
  echo "$dir"
}

# go_build_cached without optimising or inlining, for the command-line tools our tests only run and
# never measure: they compile in about three quarters of the time.
go_build_unoptimised_cached() { GO_GCFLAGS="all=-N -l" go_build_cached "$@"; }

# A short hash of files' contents (sources of our own programs), for cache keys.
content_key() { cat "$@" | sha256sum | cut -c1-12; }
