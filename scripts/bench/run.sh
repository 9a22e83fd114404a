#!/usr/bin/env bash
# `make bench`: installs what is missing, builds the release module, then runs the two
# benchmarks and writes their JSON and PNG files into docs/bench/:
#   commandstats.py  server time per call of BF.*/CF.* next to GETBIT and SISMEMBER
#   feed_dedup.py    the feed de-duplication workload, per-user SETs against bloomrs, and its
#                    time-stepped mode (--days 90 --window-days 30): growing filters, windowed
#                    filters and trimmed sorted sets over simulated days
#   sparse.py        sparse Bloom filters: MEMORY USAGE by items held against a SET and the
#                    dense filter, and costs per call; then feed_dedup.py with and without
#                    80% idle users, adding bloomrs with bf-sparse-max-bytes 2048
#   counting.py      counting Bloom filters: bits per item against Bloom and Cuckoo, false
#                    positives after churn, saturation, and usec_per_call against plain Bloom
#   compact.py       compact Bloom filters: MEMORY USAGE against the one-link floor, the tiers,
#                    sparse and a SET; false positives; speed against one link and the tiers;
#                    the longest command while growing; deletes; then feed_dedup.py --compact
#                    with and without 80% idle users (compact filters next to the tiers and the
#                    sparse start), and the time-stepped run again with compact filters next to
#                    the windowed ones (--compact, feed_forget-compact.json)
#   compact_guarantees.py  issue 26's bounds: BF.MADD/MEXISTS/MDEL on a COMPACT COUNTING filter
#                    holding 1M adds of one item against one without duplicates, and the longest
#                    command while a compact filter and the default chain grow to 10M items
# and prints the tables of the README and docs/ from the JSON (tables.py).
# Usage: scripts/bench/run.sh [--quick] [--module PATH] [--users N]
#   --quick        fewer runs and requests, 10,000 users (about a minute instead of ~5)
#   --module PATH  also measure another module build, alternating with bloomrs, with ratios
#   --users N      users in the feed simulation (default 100,000)
set -euo pipefail
cd "$(dirname "$0")/../.."

stats_args=()
feed_args=()
sparse_args=()
forget_args=(--days 90 --window-days 30)
counting_args=()
compact_args=()
guarantees_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) stats_args+=(--quick); feed_args+=(--quick); forget_args+=(--quick)
            sparse_args+=(--quick); counting_args+=(--quick); compact_args+=(--quick)
            guarantees_args+=(--quick) ;;
        --module) stats_args+=(--module "$2"); shift ;;
        --users) feed_args+=(--users "$2"); shift ;;
        *) echo "unknown option: $1 (see the top of $0)" >&2; exit 2 ;;
    esac
    shift
done

scripts/bench/setup.sh
"${CARGO:-cargo}" build --release
module="${CARGO_TARGET_DIR:-target}/release/libbloomrs.so"
# The time-stepped simulation moves the server's clock: only the fault-injection build can.
"${CARGO:-cargo}" build --release --features fault-injection --target-dir target/fault-injection
fault_module=target/fault-injection/release/libbloomrs.so
python=.venv/bin/python
# The feed with sparse starts at 2 KiB, into the result file named first; the rest are options.
feed_with_sparse() {
    local out="$1"
    shift
    "$python" scripts/bench/feed_dedup.py --bloomrs "$module" "${feed_args[@]}" \
        --sparse-max-bytes 2048 "$@" --out "$out"
}

echo "== server time per call (scripts/bench/commandstats.py)"
"$python" scripts/bench/commandstats.py --bloomrs "$module" "${stats_args[@]}"
echo "== feed de-duplication (scripts/bench/feed_dedup.py)"
"$python" scripts/bench/feed_dedup.py --bloomrs "$module" "${feed_args[@]}"
echo "== idle users: sparse Bloom filters (scripts/bench/sparse.py, feed_dedup.py --idle-share 0.8)"
"$python" scripts/bench/sparse.py --bloomrs "$module" "${sparse_args[@]}"
feed_with_sparse docs/bench/feed_dedup-idle.json --idle-share 0.8
feed_with_sparse docs/bench/feed_dedup-sparse.json --idle-share 0
echo "== forgetting over simulated days (scripts/bench/feed_dedup.py ${forget_args[*]})"
"$python" scripts/bench/feed_dedup.py --bloomrs-fault "$fault_module" "${forget_args[@]}"
echo "== counting Bloom filters (scripts/bench/counting.py)"
"$python" scripts/bench/counting.py --bloomrs "$module" "${counting_args[@]}"
echo "== compact Bloom filters (scripts/bench/compact.py)"
"$python" scripts/bench/compact.py --bloomrs "$module" "${compact_args[@]}"
feed_with_sparse docs/bench/feed_dedup-compact.json --compact --idle-share 0
feed_with_sparse docs/bench/feed_dedup-compact-idle.json --compact --idle-share 0.8
"$python" scripts/bench/feed_dedup.py --bloomrs-fault "$fault_module" "${forget_args[@]}" --compact \
    --out docs/bench/feed_forget-compact.json
echo "== compact guarantees (scripts/bench/compact_guarantees.py)"
"$python" scripts/bench/compact_guarantees.py --bloomrs "$module" "${guarantees_args[@]}"
echo "== results (scripts/bench/tables.py)"
"$python" scripts/bench/tables.py
