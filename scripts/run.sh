#!/usr/bin/env bash
# Starts a foreground redis-server with the release module loaded and a local data directory,
# so RDB and AOF work out of the box. PORT (default 6379), DATA_DIR (default ./data) and
# MODULE_ARGS (e.g. "ERROR_RATE 0.001 INITIAL_SIZE 1000") can be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-6379}"
data="${DATA_DIR:-data}"
module="$(pwd)/target/release/libbloomrs.so"
mkdir -p "$data"
# shellcheck disable=SC2086
exec redis-server --port "$port" --dir "$data" --save "3600 1 300 100 60 10000" \
    --loadmodule "$module" ${MODULE_ARGS:-}
