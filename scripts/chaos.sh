#!/usr/bin/env bash
# The long chaos run: CHAOS_OPS operations (default 1,000,000; first argument overrides) of
# random and hostile BF./CF. commands, mutated LOADCHUNK sequences and mutated RESTORE
# payloads against a real server, checking it after every batch. Prints the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-${CHAOS_OPS:-1000000}}"
scripts/install-deps.sh
cargo build --release
CHAOS_OPS="$ops" cargo test --release --test chaos -- --nocapture 2>&1 | grep -E '^chaos:|panicked|test result'
