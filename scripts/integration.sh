#!/usr/bin/env bash
# Runs the integration suite (every tests/*.rs) once per server and prints one summary line per
# server with its version, result and duration. Exits non-zero if any pass failed or a server
# is missing. Extra arguments go to the test binaries (after `--`).
#
# SERVER picks the servers (default: all four):
#   redis     Redis 7.0, `redis-server` on PATH (Debian 12's package)
#   valkey    Valkey 8.0, `valkey-server` on PATH (Debian 12's bookworm-backports package)
#   redis8    Redis 8.0.x built from Debian 13's source package (scripts/install-deps.sh)
#   valkey81  Valkey 8.1.x built from Debian 13's source package (scripts/install-deps.sh)
# Several may be given, separated by spaces or commas: SERVER="redis8 valkey81".
#
# Every pass also gets BLOOMRS_SERVERS, the binaries of all four that are present, for the tests
# that move filters between servers.
set -uo pipefail

cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
all=(redis valkey redis8 valkey81)
wanted="${SERVER:-}"
if [ -z "$wanted" ] || [ "$wanted" = all ]; then
    names=("${all[@]}")
else
    read -ra names <<<"${wanted//,/ }"
fi
for name in "${names[@]}"; do
    case "$name" in
        redis | valkey | redis8 | valkey81) ;;
        *)
            echo "SERVER must be redis, valkey, redis8, valkey81 or empty (all four), not '$name'" >&2
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

summary=()
failed=0
for name in "${names[@]}"; do
    if ! server="$(scripts/install-deps.sh --server "$name" 2>/dev/null)" || [ -z "$server" ]; then
        echo "=== $name: not present (scripts/install-deps.sh installs or builds it) ==="
        summary+=("$(printf '%-9s %-14s %-8s %-7s' "$name" "-" "-" MISSING)")
        failed=1
        continue
    fi
    version="$("$server" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
    echo "=== integration suite on $name: $server $version ==="
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
    summary+=("$(printf '%-9s %-14s %-8s %-7s %dm%02ds' "$name" "$(basename "$server")" "$version" "$result" \
        $((seconds / 60)) $((seconds % 60)))")
done

echo
echo "integration suite summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
