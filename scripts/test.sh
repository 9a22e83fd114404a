#!/usr/bin/env bash
# `make test`: every test, from a clean clone, installing what is missing first.
#
#   1. scripts/install-deps.sh --no-build: the packages (apt), not the servers built from source;
#   2. in the background, while the module compiles: the servers still to build (Redis 8.0,
#      Valkey 8.1, Valkey 9.1 from Debian's source packages) and the Debian 13 and 14 roots of
#      the package test (debootstrap, mostly network time). Both are cached outside the checkout,
#      so later runs skip them. A module build keeps one core busy most of the time (one codegen
#      unit and link-time optimisation), a server build the other;
#   3. the module (release), its fault-injection build, the unit tests (run) and the integration
#      tests (built) with the `tests` profile;
#   4. once the background work is done: the integration suite on every server
#      (scripts/integration.sh), then the package test (`make package-test`) where dpkg-deb is.
#
# SERVER limits the servers as for scripts/integration.sh. The background work's output is
# printed when it is waited for.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"

scripts/install-deps.sh --no-build

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
wanted="${SERVER:-all}"
built=()
for name in ${wanted//,/ }; do
    case "$name" in
        redis8 | valkey81 | valkey9) built+=("$name") ;;
        all) built+=(redis8 valkey81 valkey9) ;;
    esac
done
background=()
# The servers one after the other (each build uses both cores when it can).
(
    for name in "${built[@]}"; do
        scripts/install-deps.sh --probe "$name" >/dev/null 2>&1 || scripts/install-deps.sh --build "$name" || exit 1
    done
) >"$logs/servers.log" 2>&1 &
background+=("$!:servers")
if command -v dpkg-deb >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null 2>&1; then
    (scripts/package/debian.sh 13 --root-only && scripts/package/debian.sh 14 --root-only) \
        >"$logs/roots.log" 2>&1 &
    background+=("$!:roots")
fi

# wait_background: waits for the background work, prints its output, fails if any of it failed.
wait_background() {
    local entry pid what status=0
    for entry in "${background[@]}"; do
        pid="${entry%%:*}"
        what="${entry#*:}"
        if ! wait "$pid"; then
            echo "error: the background $what work failed:" >&2
            status=1
        fi
        cat "$logs/$what.log"
    done
    background=()
    return "$status"
}

if ! {
    "$cargo" build --release &&
        "$cargo" build --release --features fault-injection --target-dir target/fault-injection &&
        "$cargo" test --profile tests --lib &&
        "$cargo" test --profile tests --test '*' --no-run &&
        # The fuzz targets are a crate of their own that no test builds: check they compile.
        "$cargo" check --manifest-path fuzz/Cargo.toml --bins --target-dir target/fuzz-check
}; then
    wait_background || true
    exit 1
fi
wait_background
CARGO="$cargo" SERVER="${SERVER:-}" scripts/integration.sh
if command -v dpkg-deb >/dev/null 2>&1; then
    make --no-print-directory package-test
else
    echo "no dpkg-deb: package test not run"
fi
