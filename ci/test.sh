#!/usr/bin/env bash
# README command (2): set up, build and run every test: the unit tests, and the integration
# tests through the ocl-icd loader on lavapipe with Vulkan validation errors fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash ci/setup.sh
source ci/env.sh
python3 tools/gen_cl.py --check
cargo build --all-targets
# Every Vulkan validation error aborts the test process that caused it.
export VKCL_VALIDATION=fatal
cargo test --no-fail-fast 2>&1 | tee target/test.log
echo "ci/test.sh: $(( $(date +%s) - start )) s"
