#!/usr/bin/env bash
# Builds .dev/ for ci/h200.sh (the device tool carries .dev and .gl): a stripped release
# libvkcl.so and vkcl-clspv, libclspv.so.xz, the example programs, the integration-test
# executables (stripped, in .dev/deps.tar.xz), vkcl-bench, raw_vulkan, svm_probe and the probes
# fault and latency (tools/diag). About 60 MiB.
# .gl/ (the Vulkan loader's .debs) is made once by the line in ../shared/GPU.md.
#   bash ci/h200-prepare.sh pyopencl   builds .pyw/ instead (ci/h200.sh pyopencl): libvkcl.so,
#     vkcl-clspv, libclspv.so.xz and wheels/ (ci/pyopencl.pins for the H200's Python 3.12, but
#     scipy, and pyopencl's sdist), about 55 MiB: with .gl and the tree, under the 64 MiB carried.
set -euo pipefail
cd "$(dirname "$0")/.."
# The clspv library xz'd (30 of the wheel's 43 MB), made once per clspv wheel.
clspv_xz() {
  if [ ! -f .clspv/libclspv.so.xz ] || [ .clspv/libclspv.so.xz -ot .clspv/libclspv.so ]; then
    xz -T0 -9e -c .clspv/libclspv.so > .clspv/libclspv.so.xz
  fi
  echo .clspv/libclspv.so.xz
}
if [ "${1:-}" = pyopencl ]; then
  cargo build --release
  rm -rf .pyw && mkdir -p .pyw/wheels
  # xz'd (ci/h200.sh unpacks them): with .gl and the tree, the carry must stay under 64 MiB.
  strip -o .pyw/libvkcl.so target/release/libvkcl.so
  strip -o .pyw/vkcl-clspv target/release/vkcl-clspv
  xz -T0 -9 .pyw/libvkcl.so .pyw/vkcl-clspv
  cp "$(clspv_xz)" .pyw/
  mapfile -t pins < <(grep -v '^#' ci/pyopencl.pins | sed 's/ *#.*//' | grep . | grep -v '^scipy')
  python3 -m pip download --quiet --disable-pip-version-check --only-binary :all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .pyw/wheels pip "${pins[@]}"
  cp target/pyopencl/sdist/pyopencl-*.tar.gz .pyw/wheels/
  du -sh .pyw
  exit 0
fi
rm -rf .dev && mkdir -p .dev/deps
cargo build --release
cargo build --release --example raw_vulkan --example svm_probe
strip -o .dev/libvkcl.so target/release/libvkcl.so
strip -o .dev/vkcl-clspv target/release/vkcl-clspv
strip -o .dev/raw_vulkan target/release/examples/raw_vulkan
strip -o .dev/svm_probe target/release/examples/svm_probe
cp "$(clspv_xz)" .dev/
for src in examples/*.c tools/diag/fault.c tools/diag/latency.c; do
  cc -O2 -Wall "$src" -o ".dev/$(basename "$src" .c)" -lOpenCL -lm
done
bash bench/build.sh .dev/vkcl-bench
# Device-side enqueue needs clang 15 or 16 (compiler::device_enqueue); the device machine has
# Ubuntu's libclang-cpp.so.16 and libLLVM-16 but no clang: Debian's clang-16 driver (145 KB)
# and its two OpenCL headers travel in .dev/clang16 (ci/h200.sh sets VKCL_CLANG to it).
if [ ! -x /usr/lib/llvm-16/bin/clang ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends clang-16
fi
mkdir -p .dev/clang16/bin .dev/clang16/lib/clang/16/include
cp /usr/lib/llvm-16/bin/clang .dev/clang16/bin/clang
cp /usr/lib/llvm-16/lib/clang/16/include/opencl-c.h /usr/lib/llvm-16/lib/clang/16/include/opencl-c-base.h \
  .dev/clang16/lib/clang/16/include/
cargo test --release --no-run --message-format=json 2>/dev/null |
  python3 -c "import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get('reason') == 'compiler-artifact' and m.get('executable') and m['target']['kind'] == ['test']:
        print(m['executable'])" |
  while read -r exe; do strip -o ".dev/deps/$(basename "$exe" | sed 's/-[0-9a-f]*$//')" "$exe"; done
# The device tool carries 64 MiB at most: the test executables travel compressed.
tar -C .dev -cJf .dev/deps.tar.xz deps && rm -rf .dev/deps
du -sh .dev
# .gl/ must hold what ci/h200.sh's header lists beyond ../shared/GPU.md's line: without
# spirv-tools every test of tests/il_programs.rs fails there (no spirv-as; the twenty-eighth
# session's run), without clpeak the clpeak part has nothing to run.
for pkg in spirv-tools clpeak; do
  ls .gl/${pkg}_*.deb >/dev/null 2>&1 || echo "warning: .gl/ has no $pkg .deb (apt-get download $pkg into .gl/)"
done
