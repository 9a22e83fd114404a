#!/usr/bin/env bash
# Installs what the benchmark suite needs: the system packages of scripts/install-deps.sh
# (redis-server, redis-benchmark, libclang for the build), python3-venv where it is missing, and
# .venv with the pinned packages of scripts/bench/requirements.txt (reinstalled when that changes).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh

if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
    echo "installing: python3-venv"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq python3-venv >/dev/null ||
        { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq python3-venv >/dev/null; }
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/bench-requirements.txt
if ! cmp -s scripts/bench/requirements.txt "$stamp"; then
    .venv/bin/pip install -q --disable-pip-version-check -r scripts/bench/requirements.txt
    cp scripts/bench/requirements.txt "$stamp"
fi
