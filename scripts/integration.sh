#!/usr/bin/env bash
# Runs the integration suite (every tests/*.rs) once per server and prints one summary line per
# server with its version, result and duration. Exits non-zero if any pass failed or a server
# is missing. Extra arguments go to the test binaries (after `--`).
#
# SERVER picks the servers (default: all five):
#   redis     Redis 7.0, `redis-server` on PATH (Debian 12's package)
#   valkey    Valkey 8.0, `valkey-server` on PATH (Debian 12's bookworm-backports package)
#   redis8    Redis 8.0.x built from Debian 13's source package (scripts/install-deps.sh)
#   valkey81  Valkey 8.1.x built from Debian 13's source package (scripts/install-deps.sh)
#   valkey9   Valkey 9.1.x built from Debian 14's source package (scripts/install-deps.sh)
# Several may be given, separated by spaces or commas: SERVER="redis8 valkey9".
#
# SUITES_AT_ONCE (default: all of them) passes run at the same time, each printed whole when it
# ends. The tests are built with the `tests` profile (Cargo.toml: optimised, no link-time
# optimisation); the module they load is the release build (`cargo build --release`).
#
# Every pass also gets BLOOMRS_SERVERS, the binaries of all five that are present, for the tests
# that move filters between servers.
set -uo pipefail

cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
all=(redis valkey redis8 valkey81 valkey9)
wanted="${SERVER:-}"
if [ -z "$wanted" ] || [ "$wanted" = all ]; then
    names=("${all[@]}")
else
    read -ra names <<<"${wanted//,/ }"
fi
for name in "${names[@]}"; do
    case "$name" in
        redis | valkey | redis8 | valkey81 | valkey9) ;;
        *)
            echo "SERVER must be redis, valkey, redis8, valkey81, valkey9 or empty (all five), not '$name'" >&2
            exit 2
            ;;
    esac
done

# The binaries of every server present, for the cross-server tests.
present=()
for name in "${all[@]}"; do
    if binary="$(scripts/install-deps.sh --server "$name" 2>/dev/null)" && [ -n "$binary" ]; then
        present+=("$binary")
    fi
done
BLOOMRS_SERVERS="$(
    IFS=:
    echo "${present[*]}"
)"
export BLOOMRS_SERVERS

# Build the test binaries once, outside the timed passes.
"$cargo" test --profile tests --test '*' --no-run || exit 1

# Suites run SUITES_AT_ONCE at a time (default: all): a suite spends most of its time waiting on
# its servers (replication, restarts, timeouts; about a quarter of a core each), so all five
# share the two cores of a small machine well. Each suite's output is kept in a file and printed
# whole when it ends.
at_once="${SUITES_AT_ONCE:-${#names[@]}}"
if ! [[ "$at_once" =~ ^[1-9][0-9]*$ ]]; then
    echo "SUITES_AT_ONCE must be a positive number, not '$at_once'" >&2
    exit 2
fi
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

# run_suite NAME [ARGS...]: one pass of the suite on server NAME; its output in $logs/NAME.out, its
# summary line in $logs/NAME.line, its exit status that of the pass.
run_suite() {
    local name="$1" server version start status seconds result
    shift
    if ! server="$(scripts/install-deps.sh --server "$name" 2>/dev/null)" || [ -z "$server" ]; then
        echo "=== $name: not present (scripts/install-deps.sh installs or builds it) ===" >"$logs/$name.out"
        printf '%-9s %-14s %-8s %-7s' "$name" "-" "-" MISSING >"$logs/$name.line"
        return 1
    fi
    version="$("$server" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
    start=$(date +%s)
    {
        echo "=== integration suite on $name: $server $version ==="
        BLOOMRS_SERVER="$server" "$cargo" test --profile tests --no-fail-fast --test '*' -- --test-threads 2 "$@"
    } >"$logs/$name.out" 2>&1
    status=$?
    seconds=$(($(date +%s) - start))
    result=passed
    [ "$status" -eq 0 ] || result=FAILED
    printf '%-9s %-14s %-8s %-7s %dm%02ds' "$name" "$(basename "$server")" "$version" "$result" \
        $((seconds / 60)) $((seconds % 60)) >"$logs/$name.line"
    return "$status"
}

# A pool: a new suite starts whenever one ends; the summary keeps the servers' order.
failed=0
declare -A running=()
finish_one() {
    local pid
    wait -n -p pid "${!running[@]}" || failed=1
    cat "$logs/${running[$pid]}.out"
    unset "running[$pid]"
}
for name in "${names[@]}"; do
    [ "${#running[@]}" -lt "$at_once" ] || finish_one
    run_suite "$name" "$@" &
    running[$!]="$name"
done
while [ "${#running[@]}" -gt 0 ]; do
    finish_one
done
summary=()
for name in "${names[@]}"; do
    summary+=("$(cat "$logs/$name.line")")
done

echo
echo "integration suite summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
