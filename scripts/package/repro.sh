#!/usr/bin/env bash
# Proves the artifacts reproducible: builds one commit (default HEAD) twice, each in a fresh
# clone at a different path (one with a space in it) with its own cold target directory, and
# compares the two dist/SHA256SUMS. Slow (two full release builds), so not part of `make test`,
# which compares two packagings of one build instead. `make package-repro` runs it.
set -euo pipefail

cd "$(dirname "$0")/../.."
commit="$(git rev-parse "${1:-HEAD}")"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/bloomrs-repro.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

sums=()
for dir in "$scratch/one" "$scratch/a second build"; do
    git clone -q --no-hardlinks "$PWD" "$dir"
    git -C "$dir" checkout -q "$commit"
    echo "--- building $commit in a fresh clone"
    (cd "$dir" && CARGO="${CARGO:-cargo}" scripts/package/build.sh >/dev/null)
    sums+=("$(cat "$dir/dist/SHA256SUMS")")
    echo "${sums[-1]}"
done
if [ "${sums[0]}" != "${sums[1]}" ]; then
    echo "FAIL: the two builds of $commit differ" >&2
    exit 1
fi
echo "reproducible: both builds of $commit gave the same bytes"
