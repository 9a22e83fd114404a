#!/usr/bin/env bash
# Installs what the benchmark suite needs: the system packages of scripts/install-deps.sh
# (redis-server, redis-benchmark, libclang for the build), python3-venv and perf (linux-perf, for
# scripts/bench/profile.py) where they are missing, and .venv with the pinned packages of
# scripts/bench/requirements.txt (reinstalled when that changes).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
apt_install() {
    echo "installing: $1"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$1" >/dev/null ||
        { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "$1" >/dev/null; }
}
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || apt_install python3-venv
command -v perf >/dev/null 2>&1 || apt_install linux-perf || echo "no perf: scripts/bench/profile.py will not run"

[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/bench-requirements.txt
if ! cmp -s scripts/bench/requirements.txt "$stamp"; then
    .venv/bin/pip install -q --disable-pip-version-check -r scripts/bench/requirements.txt
    cp scripts/bench/requirements.txt "$stamp"
fi
