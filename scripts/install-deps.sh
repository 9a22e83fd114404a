#!/usr/bin/env bash
# Installs what building and testing bloomrs needs on Debian/Ubuntu: redis-server and
# redis-tools (the server the tests start, redis-cli, redis-benchmark) and libclang-dev (bindgen
# in the redis-module crate loads libclang at build time). Says exactly what is missing where it
# cannot install.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ls /usr/lib/*/libclang*.so* >/dev/null 2>&1; then
    missing+=(libclang-dev)
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not installed; install a Rust toolchain (https://rustup.rs) first" >&2
    exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "installing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "error: missing packages ${missing[*]}; run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: no apt-get here; install these packages with your package manager: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
