# Sourced by tools/images/build.sh and push.sh (from the repository root, after tools/toolchain/go-build.sh):
# buildah with its storage under <cache>/images (b), one run at a time per cache, a scratch directory
# ($work), and nothing left mounted or running on exit.
cache="$(cache_root)/images"
mkdir -p "$cache/downloads" "$cache/tmp"
# One run at a time per cache: a second would remove the first's containers and archives. A script
# run by one that holds the lock (push.sh runs build.sh) works under it.
if [ -z "${OUTRIGGER_IMAGES_LOCKED:-}" ]; then
  exec 9>"$cache/.lock"
  flock 9
  export OUTRIGGER_IMAGES_LOCKED=1
  # A killed run leaves its scratch and buildah's per-build directories; no one else owns them now.
  rm -rf --one-file-system "$cache/tmp"/work.* "$cache/tmp"/buildah[0-9]*
fi
say() { echo "  $*" >&2; }

# buildah keeps everything under the cache, never in the system's /var/lib/containers; its RUN
# cache mounts (npm's cache) live under TMPDIR.
export TMPDIR="$cache/tmp"
storage=(--root "$cache/storage" --runroot "$cache/storage-run" --storage-driver overlay)
b() { buildah "${storage[@]}" "$@"; }
work=$(mktemp -d "$cache/tmp/work.XXXXXX")
# Leaves no container and no mount behind, also after a failed build: buildah keeps a failed
# build's containers mounted, and its overlay driver mounts its own directory.
cleanup() {
  b rm --all >/dev/null 2>&1 || true
  { awk '{print $5}' /proc/self/mountinfo | grep "^$cache/storage" || true; } | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
if probe=$(b from scratch 2>/dev/null) && b mount "$probe" >/dev/null 2>&1; then
  b rm "$probe" >/dev/null
else
  say "overlay storage does not work here; using vfs"
  cleanup
  storage=(--root "$cache/storage-vfs" --runroot "$cache/storage-run-vfs" --storage-driver vfs)
  mkdir -p "$work"
fi

