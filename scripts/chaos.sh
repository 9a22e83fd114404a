#!/usr/bin/env bash
# The long chaos run: CHAOS_OPS operations (default 1,000,000; first argument overrides) of
# random and hostile BF./CF. commands, mutated LOADCHUNK sequences and mutated RESTORE
# payloads against a real server, checking it after every batch; then the randomized
# replication test for REPL_OPS operations (default 200,000) against a primary and a replica,
# on SERVER (redis, valkey, or both when empty), with BLOOMRS_SEED if set. Prints the counts
# (and a replication failure's whole report).
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-${CHAOS_OPS:-1000000}}"
repl_ops="${REPL_OPS:-200000}"
scripts/install-deps.sh
cargo build --release
cargo build --release --features fault-injection --target-dir target/fault-injection
CHAOS_OPS="$ops" cargo test --release --test chaos -- --nocapture 2>&1 | grep -E '^chaos:|panicked|test result'
case "${SERVER:-}" in
    redis) servers=(redis-server) ;;
    valkey) servers=(valkey-server) ;;
    *) servers=(redis-server valkey-server) ;;
esac
for server in "${servers[@]}"; do
    BLOOMRS_SERVER="$server" BLOOMRS_REPL_OPS="$repl_ops" \
        cargo test --release --test replication_random -- --nocapture
done
