#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 60) each, seeded from the RedisBloom
# fixtures and from values commands built with one header byte changed. Uses the nightly
# toolchain (with AddressSanitizer) when installed, else stable without a sanitizer. Crashes
# land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz run)
else
    fuzz=(cargo fuzz run -s none)
fi
python3 scripts/fuzz-seeds.py fuzz/corpus
# Values commands built, and each with one header byte changed (src/model/seeds.rs).
BLOOMRS_FUZZ_SEEDS="$PWD/fuzz/corpus" cargo test --release --lib write_fuzz_seeds -- --ignored --quiet
for target in bloom_chunks cuckoo_chunks bloom_rdb cuckoo_rdb windowed sparse counting compact blocked args \
    model_chain model_sparse model_windowed model_counting model_compact model_compact_counting model_cuckoo \
    model_blocked static_set model_static compact_windowed model_compact_windowed valkey_bloom \
    model_valkey_bloom; do
    [ -f "fuzz/fuzz_targets/$target.rs" ] || continue
    mkdir -p "fuzz/corpus/$target"
    echo "== $target (${seconds}s)"
    "${fuzz[@]}" "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 2>&1 |
        grep -E '^(Done|#[0-9]+.*DONE)|ERROR|panicked|SUMMARY|Test unit written' || true
    ls "fuzz/artifacts/$target" 2>/dev/null | grep -q . && { echo "crash found in $target"; exit 1; }
done
echo "fuzzing finished without crashes"
