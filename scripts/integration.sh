#!/usr/bin/env bash
# Runs the integration suite (every tests/*.rs) once per server and prints one summary line per
# server with its duration. SERVER=redis or SERVER=valkey runs one; default both. Exits non-zero
# if any pass failed. Extra arguments go to the test binaries (after `--`).
set -uo pipefail

cargo="${CARGO:-cargo}"
case "${SERVER:-all}" in
    redis) servers=(redis-server) ;;
    valkey) servers=(valkey-server) ;;
    all | "") servers=(redis-server valkey-server) ;;
    *)
        echo "SERVER must be redis, valkey or empty (both), not '${SERVER}'" >&2
        exit 2
        ;;
esac

# Build the test binaries once, outside the timed passes.
"$cargo" test --release --test '*' --no-run || exit 1

summary=()
failed=0
for server in "${servers[@]}"; do
    version="$("$server" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
    echo "=== integration suite on ${server} ${version} ==="
    start=$(date +%s)
    BLOOMRS_SERVER="$server" "$cargo" test --release --no-fail-fast --test '*' -- --test-threads 2 "$@"
    status=$?
    seconds=$(($(date +%s) - start))
    if [ "$status" -eq 0 ]; then
        result=passed
    else
        result=FAILED
        failed=1
    fi
    summary+=("$(printf '%-14s %-8s %-7s %dm%02ds' "$server" "$version" "$result" $((seconds / 60)) $((seconds % 60)))")
done

echo
echo "integration suite summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
