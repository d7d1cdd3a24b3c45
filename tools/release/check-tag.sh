#!/usr/bin/env bash
# Refuses to publish a release whose tag (v1.2.0) is not the version the repository spells
# (package.json's, which every other spelling equals: tools/release/release-version.spec.ts).
set -euo pipefail
tag=${1:?usage: check-tag.sh <tag, e.g. v1.2.0>}
version=$(bash "$(dirname "$0")/release-version.sh")
if [ "${tag#v}" != "$version" ]; then
  echo "tag $tag is not this commit's release version ($version, package.json): run \`npm run release:version -- ${tag#v}\`, commit, and tag that commit" >&2
  exit 1
fi
echo "tag $tag is release $version"
