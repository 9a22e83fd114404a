#!/usr/bin/env bash
# Runs every fuzz target (FUZZ_TARGETS, space-separated, for some) for FUZZ_SECONDS (default
# 60) each, seeded from the corpora kept in fuzz/seeds/<target>/, the RedisBloom fixtures, and
# values commands built with one header byte changed. Uses the nightly toolchain (with
# AddressSanitizer) when installed, else stable without a sanitizer. Crashes (which stop the
# run) and slow units (listed) land in fuzz/artifacts/<target>/. With FUZZ_KEEP=1 each
# target's corpus is then minimized (`cargo fuzz cmin`) and replaces fuzz/seeds/<target>/,
# trimmed to its smallest inputs within FUZZ_KEEP_KB (default 64) kilobytes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
keep_kb="${FUZZ_KEEP_KB:-64}"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo_fuzz=(cargo +nightly fuzz) sanitizer=()
else
    cargo_fuzz=(cargo fuzz) sanitizer=(-s none)
fi
# Minimizes a target's corpus and keeps it in fuzz/seeds/<target>/, smallest inputs first
# within keep_kb.
keep() {
    local target="$1" kept=0 size file
    "${cargo_fuzz[@]}" cmin "${sanitizer[@]}" "$target" "fuzz/corpus/$target" -- -rss_limit_mb=2048 \
        >/dev/null 2>&1 || { echo "cmin of $target failed"; exit 1; }
    # Seeds kept by name (not by the fuzzer's hash) are regression inputs a test may read:
    # they stay whatever the minimizing keeps.
    local named
    named="$(mktemp -d)"
    find "fuzz/seeds/$target" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' \
        -exec cp {} "$named/" \; 2>/dev/null || true
    rm -rf "fuzz/seeds/$target"
    mkdir -p "fuzz/seeds/$target"
    cp "$named"/* "fuzz/seeds/$target/" 2>/dev/null || true
    rm -rf "$named"
    while read -r size file; do
        [ $((kept + size)) -le $((keep_kb * 1024)) ] || break
        cp "$file" "fuzz/seeds/$target/"
        kept=$((kept + size))
    done < <(find "fuzz/corpus/$target" -type f -printf '%s %p\n' | sort -n)
    echo "kept $(ls "fuzz/seeds/$target" | wc -l) inputs ($kept bytes) of $(ls "fuzz/corpus/$target" | wc -l) in fuzz/seeds/$target"
}

python3 scripts/fuzz-seeds.py fuzz/corpus
# Values commands built, and each with one header byte changed (src/model/seeds.rs).
BLOOMRS_FUZZ_SEEDS="$PWD/fuzz/corpus" cargo test --profile tests --lib write_fuzz_seeds -- --ignored --quiet
all_targets=(bloom_chunks cuckoo_chunks bloom_rdb cuckoo_rdb windowed sparse counting compact blocked args \
    model_chain model_sparse model_windowed model_counting model_compact model_compact_counting model_cuckoo \
    model_blocked static_set model_static compact_windowed model_compact_windowed valkey_bloom \
    model_valkey_bloom)
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"
for target in "${targets[@]}"; do
    [ -f "fuzz/fuzz_targets/$target.rs" ] || continue
    mkdir -p "fuzz/corpus/$target"
    if [ -d "fuzz/seeds/$target" ]; then cp -n "fuzz/seeds/$target"/* "fuzz/corpus/$target"/ || true; fi
    echo "== $target (${seconds}s)"
    "${cargo_fuzz[@]}" run "${sanitizer[@]}" "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 2>&1 |
        grep -E '^(Done|#[0-9]+.*DONE)|ERROR|panicked|SUMMARY|Test unit written' || true
    # A slow unit (one input over ten seconds) is listed and the run goes on; anything else
    # the fuzzer writes (a crash, a leak, an out-of-memory, a timeout) stops it.
    ls "fuzz/artifacts/$target" 2>/dev/null | grep '^slow-unit-' | sed "s|^|slow unit in $target: |" || true
    ls "fuzz/artifacts/$target" 2>/dev/null | grep -v '^slow-unit-' | grep -q . &&
        { echo "crash found in $target"; exit 1; }
    if [ "${FUZZ_KEEP:-0}" = 1 ]; then keep "$target"; fi
done
echo "fuzzing finished without crashes"
