#!/usr/bin/env bash
# `make bench`: installs what is missing, builds the release module, then runs the two
# benchmarks and writes their JSON and PNG files into docs/bench/:
#   commandstats.py  server time per call of BF.*/CF.* next to GETBIT and SISMEMBER
#   feed_dedup.py    the feed de-duplication workload, per-user SETs against bloomrs, and its
#                    time-stepped mode (--days 90 --window-days 30): growing filters, windowed
#                    filters, compact windowed filters and trimmed sorted sets over simulated days
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
#   compact_guarantees.py  the compact kind's bounds: BF.MADD/MEXISTS/MDEL on a COMPACT COUNTING filter
#                    holding 1M adds of one item against one without duplicates, and the longest
#                    command while a compact filter and the default chain grow to 10M items
#   bigvalues.py     big values do not block: the longest single command (creation, growth,
#                    SCANDUMP chunk, DUMP, COPY, UNLINK, DEL) on a 100M-item filter of each kind,
#                    next to RedisBloom's when --redisbloom is given
#   migration.py     the longest pause a client sees while a 100M-item filter moves between
#                    two cluster nodes, as one key and split into 64 (docs/cluster-split.md)
#   atomic_migration.py  the same moved by Valkey 9's CLUSTER MIGRATESLOTS, next to MIGRATE on
#                    the same server (where install-deps built Valkey 9.1: SERVER=valkey9)
#   blocked.py       blocked Bloom filters: server time per call against RedisBloom's one-link
#                    filter (--redisbloom PATH, else bloomrs's plain kind, the same layout) at
#                    10M items and on a filter grown to 1M, and MEMORY USAGE at the same
#                    measured false-positive rate (blocked-10M.json; --blocked-items 100000000
#                    adds the 100M run, blocked-100M.json)
# and prints the tables of the README and docs/ from the JSON (tables.py).
# Usage: scripts/bench/run.sh [--quick] [--module PATH] [--redisbloom PATH] [--users N]
#                             [--blocked-items N]
#   --quick        fewer runs and requests, 10,000 users (about a minute instead of ~5)
#   --module PATH  also measure another module build, alternating with bloomrs, with ratios
#   --redisbloom PATH  a RedisBloom 2.8 build, the yardstick of bigvalues.py and blocked.py
#   (--quick runs bigvalues.py and the migrations at 10M items instead of 100M)
#   --users N      users in the feed simulation (default 100,000)
#   --blocked-items N  also run blocked.py at N items (e.g. 100000000: ~0.5 GB, ~15 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."

stats_args=()
feed_args=()
sparse_args=()
forget_args=(--days 90 --window-days 30 --compact-window)
counting_args=()
compact_args=()
guarantees_args=()
big_args=()
redisbloom=()
blocked_args=()
blocked_items=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) stats_args+=(--quick); feed_args+=(--quick); forget_args+=(--quick)
            sparse_args+=(--quick); counting_args+=(--quick); compact_args+=(--quick)
            blocked_args+=(--quick); guarantees_args+=(--quick); big_args+=(--items 10000000) ;;
        --module) stats_args+=(--module "$2"); shift ;;
        --redisbloom) redisbloom=(--redisbloom "$2"); shift ;;
        --blocked-items) blocked_items+=("$2"); shift ;;
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
echo "== blocked Bloom filters (scripts/bench/blocked.py)"
"$python" scripts/bench/blocked.py --bloomrs "$module" "${blocked_args[@]}" "${redisbloom[@]}"
for items in "${blocked_items[@]}"; do
    "$python" scripts/bench/blocked.py --bloomrs "$module" "${blocked_args[@]}" "${redisbloom[@]}" \
        --items "$items"
done
echo "== big values (scripts/bench/bigvalues.py, migration.py, atomic_migration.py)"
"$python" scripts/bench/bigvalues.py --bloomrs "$module" "${big_args[@]}" "${redisbloom[@]}"
"$python" scripts/bench/migration.py --bloomrs "$module" "${big_args[@]}"
if valkey9="$(scripts/install-deps.sh --server valkey9 2>/dev/null)"; then
    "$python" scripts/bench/atomic_migration.py --bloomrs "$module" --server "$valkey9" "${big_args[@]}"
else
    echo "no Valkey 9.1 (SERVER=valkey9 scripts/install-deps.sh builds it): atomic_migration.py not run"
fi
echo "== results (scripts/bench/tables.py)"
"$python" scripts/bench/tables.py
