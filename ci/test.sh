#!/usr/bin/env bash
# README command (2): set up, build and run every test:
#  1. the unit tests and the integration tests (through the ocl-icd loader on lavapipe, with
#     Vulkan validation errors fatal): cargo test; then the buffer tests again with
#     VKCL_PLACEMENT=device (the staging paths of discrete GPUs; 1D buffer images) and
#     VKCL_PLACEMENT=mapped (those of discrete GPUs whose memory the host maps), and the
#     multi-device tests with VKCL_MULTI_DEVICE=copies and =shared;
#  2. other people's suites against vkcl, each compared with its ci/expectations file:
#     piglit's OpenCL tests, pyopencl's test suite, CLBlast's correctness tests (18 of the 22
#     routines of issue 15: ci/clblast.sh), OpenCV's OpenCL path (ci/opencv.sh), ffmpeg's
#     OpenCL filters each compared frame by frame with pocl's output (ci/ffmpeg.sh), and a
#     clpeak smoke run; then vkcl-bench
#     with --quick settings (ci/bench.sh: results checked, no timing assertions); the packages
#     (ci/package_test.sh: the .deb installed by the README's CI recipe and removed, the tarball
#     used without root);
#  3. the source rules (cargo fmt --check, tools/fn_lengths.py: issue 17), and the pass table
#     (ci/conformance.py table) must equal the one in docs/CONFORMANCE.md.
# Every part runs even when an earlier one fails; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash ci/setup.sh || exit 1
source ci/env.sh
python3 tools/gen_cl.py --check || exit 1
cargo build --all-targets || exit 1

failed=()
passed=0
part() {
  local name=$1; shift
  local t0=$(date +%s)
  echo "=== $name"
  if "$@"; then passed=$((passed + 1)); else failed+=("$name"); fi
  echo "=== $name: $(( $(date +%s) - t0 )) s"
}

mkdir -p target/conformance
rm -f target/conformance/*.results
# Issue 17's source rules: rustfmt formats every file (entry points included), and no function
# of src/core or src/vk is longer than 150 lines.
source_rules() {
  local rc=0
  if cargo fmt --version >/dev/null 2>&1; then cargo fmt --check || rc=1
  else echo "rustfmt is not installed: cargo fmt --check not run"; fi
  python3 tools/fn_lengths.py || rc=1
  return $rc
}
part "source rules" source_rules
# Every Vulkan validation error aborts the test process that caused it.
part "cargo test" env VKCL_VALIDATION=fatal cargo test --no-fail-fast
# The discrete-GPU placement (device-local buffers, staging copies) on lavapipe: the test files
# that move buffer contents, again.
# (VKCL_COPY_BY_KERNEL=1: NVIDIA's large device-local copies by kernel, tested here too.)
part "cargo test, VKCL_PLACEMENT=device" env VKCL_VALIDATION=fatal VKCL_PLACEMENT=device VKCL_COPY_BY_KERNEL=1 \
  cargo test --no-fail-fast --test placement --test buffers --test rect --test commands --test kernels --test images --test multi_device
# The same with device-local memory the host maps (resizable BAR: direct small writes and
# write maps, streaming-load small reads).
part "cargo test, VKCL_PLACEMENT=mapped" env VKCL_VALIDATION=fatal VKCL_PLACEMENT=mapped \
  cargo test --no-fail-fast --test placement --test buffers --test rect --test commands --test kernels --test images --test multi_device
# Contexts of two devices (tests/multi_device.rs; VKCL_DEVICE_COPIES=2 on one lavapipe) whose
# buffers are copies per device moved between them, or host memory both import (the default
# there shares one allocation: the devices are one GPU's).
for m in copies shared; do
  part "cargo test, VKCL_MULTI_DEVICE=$m" env VKCL_VALIDATION=fatal VKCL_MULTI_DEVICE=$m \
    cargo test --no-fail-fast --test multi_device
done
part "piglit" bash ci/piglit.sh
part "pyopencl" bash ci/pyopencl.sh
part "CLBlast" bash ci/clblast.sh
part "OpenCV" bash ci/opencv.sh
part "ffmpeg" bash ci/ffmpeg.sh
part "package (.deb, tarball, README's CI recipe)" bash ci/package_test.sh
part "clpeak" bash ci/clpeak.sh
part "vkcl-bench (quick)" bash ci/bench.sh
python3 ci/conformance.py table > target/conformance/table.md
part "docs/CONFORMANCE.md is current" python3 ci/conformance.py doc-check target/conformance/table.md docs/CONFORMANCE.md

echo "ci/test.sh: $(( $(date +%s) - start )) s"
[ ${#failed[@]} -eq 0 ] || echo "ci/test.sh: FAILED: ${failed[*]}"
# The plain summary line CI reads: the parts above, each a suite with its own verdict.
echo "parts: $passed passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
