#!/usr/bin/env bash
# The chaos test (CHAOS_OPS operations, default 200,000) and the randomized replication test
# (REPL_OPS operations, default 50,000; BLOOMRS_SEED if set) against an AddressSanitizer build
# of the module, on Redis 7.0. Fails if either test fails or if the sanitizer reported anything.
#
# The module is built with the nightly toolchain (`-Zsanitizer=address`, fault-injection
# feature so that one build serves both tests) into target/asan/. A shared library does not
# carry the sanitizer's runtime, so each server the tests start preloads it
# (`BLOOMRS_SERVER_PRELOAD`, read by tests/common): the runtime then answers the server's
# malloc and free, and with them every allocation the module makes through the server's
# allocator. Debian's redis-server 7.0 calls only the standard malloc, free and
# malloc_usable_size of its jemalloc, so that works; Valkey 8 frees with jemalloc's own
# sdallocx, which cannot take the runtime's memory. Reports go to target/asan/reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
chaos_ops="${CHAOS_OPS:-200000}"
repl_ops="${REPL_OPS:-50000}"
server="${ASAN_SERVER:-redis-server}"
triple=x86_64-unknown-linux-gnu
rustup toolchain list 2>/dev/null | grep -q '^nightly' ||
    { echo "asan: needs the nightly toolchain (rustup toolchain install nightly)"; exit 1; }
runtime="$(gcc -print-file-name=libasan.so)"
[ -f "$runtime" ] || { echo "asan: no AddressSanitizer runtime (Debian: libasan8, with gcc)"; exit 1; }

scripts/install-deps.sh
RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes" \
    cargo +nightly build --release --features fault-injection --target "$triple" --target-dir target/asan
module="$PWD/target/asan/$triple/release/libbloomrs.so"
reports="$PWD/target/asan/reports"
rm -rf "$reports"
mkdir -p "$reports"
cargo build --profile tests --test chaos --test replication_random

# Leak checking is off: the server frees little at exit by design. A request too large to
# allocate returns null, as the server's allocator does: the server's own loading of a payload
# (RESTORE, a string in an RDB) tries the length the payload states and refuses it when the
# allocation fails; a module allocation that fails still stops the server, which fails the test.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:log_path=$reports/asan"
export BLOOMRS_SERVER="$server" BLOOMRS_MODULE="$module" BLOOMRS_FAULT_MODULE="$module"
export BLOOMRS_SERVER_PRELOAD="$runtime"
status=0
start=$SECONDS
CHAOS_OPS="$chaos_ops" cargo test --profile tests --test chaos -- --nocapture 2>&1 |
    grep -E 'chaos: |panicked|test result' || status=1
echo "asan: chaos, $chaos_ops operations, $((SECONDS - start)) s"
start=$SECONDS
BLOOMRS_REPL_OPS="$repl_ops" cargo test --profile tests --test replication_random -- --nocapture ||
    status=1
echo "asan: replication_random, $repl_ops operations, $((SECONDS - start)) s"

# Warnings (an allocation refused, as above) are shown; an error report fails the run.
if ls "$reports" | grep -q .; then
    echo "asan: AddressSanitizer reports:"
    cat "$reports"/*
    if grep -q "ERROR: AddressSanitizer" "$reports"/*; then
        exit 1
    fi
fi
[ "$status" -eq 0 ] || { echo "asan: a test failed"; exit 1; }
echo "asan: no AddressSanitizer report"
