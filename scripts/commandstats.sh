#!/usr/bin/env bash
# Server-side cost per call of the filter commands next to GETBIT, measured on one server in one
# run: resets INFO commandstats, drives each command with redis-benchmark (pipelined, random
# items) and prints usec_per_call. Usage: scripts/commandstats.sh [requests] [pipeline]
set -euo pipefail
cd "$(dirname "$0")/.."
requests="${1:-500000}"
pipeline="${2:-16}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save "" --dir "$dir" --daemonize yes \
    --logfile "$dir/redis.log" --loadmodule "$(pwd)/target/release/libbloomrs.so" >/dev/null
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
cli() { redis-cli -p "$port" "$@" >/dev/null; }
cli CONFIG RESETSTAT
cli BF.RESERVE bf 0.01 100000
cli CF.RESERVE cf 200000 >/dev/null 2>&1 || true
cli SETBIT bits 1000000 1
bench() { redis-benchmark -p "$port" -n "$requests" -P "$pipeline" -r 100000 -q "$@" >/dev/null; }
bench GETBIT bits 123457
bench BF.ADD bf __rand_int__
bench BF.EXISTS bf __rand_int__
if redis-cli -p "$port" COMMAND INFO cf.add | grep -q cf.add; then
    bench CF.ADD cf __rand_int__
    bench CF.EXISTS cf __rand_int__
fi
redis-cli -p "$port" INFO commandstats | grep -E 'cmdstat_(getbit|bf\.add|bf\.exists|cf\.add|cf\.exists):' |
    sed -E 's/^cmdstat_([^:]+):calls=([0-9]+),usec=[0-9]+,usec_per_call=([0-9.]+).*/\1 calls=\2 usec_per_call=\3/'
