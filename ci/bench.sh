#!/usr/bin/env bash
# vkcl-bench as a smoke test (no timing assertions): every benchmark group with --quick settings
# on vkcl (OCL_ICD_VENDORS, set by ci/env.sh), and the raw-Vulkan baseline on the SPIR-V vkcl
# wrote, through bench/compare.py. Fails if a benchmark errors or computes a wrong result.
# Called by ci/main.sh and ci/test.sh after their build (debug), from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/build.sh
cargo build --example raw_vulkan
python3 bench/compare.py run --quick --out target/bench/ci --bench target/bench/vkcl-bench \
  --impl "vkcl=$OCL_ICD_VENDORS:vkcl" --raw-vulkan target/debug/examples/raw_vulkan
