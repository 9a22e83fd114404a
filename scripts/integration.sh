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
# SUITES_AT_ONCE (default 2) passes run at the same time, each printed whole when it ends.
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
"$cargo" test --release --test '*' --no-run || exit 1

# Suites run SUITES_AT_ONCE at a time (default 2): a suite spends much of its time waiting on
# its servers (replication, restarts, timeouts), so two share the two cores of a small machine
# well. Each suite's output is kept in a file and printed whole when it ends.
at_once="${SUITES_AT_ONCE:-2}"
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
        BLOOMRS_SERVER="$server" "$cargo" test --release --no-fail-fast --test '*' -- --test-threads 2 "$@"
    } >"$logs/$name.out" 2>&1
    status=$?
    seconds=$(($(date +%s) - start))
    result=passed
    [ "$status" -eq 0 ] || result=FAILED
    printf '%-9s %-14s %-8s %-7s %dm%02ds' "$name" "$(basename "$server")" "$version" "$result" \
        $((seconds / 60)) $((seconds % 60)) >"$logs/$name.line"
    return "$status"
}

summary=()
failed=0
pending=("${names[@]}")
while [ "${#pending[@]}" -gt 0 ]; do
    batch=("${pending[@]:0:$at_once}")
    pending=("${pending[@]:$at_once}")
    pids=()
    for name in "${batch[@]}"; do
        run_suite "$name" "$@" &
        pids+=("$!")
    done
    for i in "${!batch[@]}"; do
        wait "${pids[$i]}" || failed=1
        cat "$logs/${batch[$i]}.out"
        summary+=("$(cat "$logs/${batch[$i]}.line")")
    done
done

echo
echo "integration suite summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
