#!/usr/bin/env bash
# Builds .dev/ for ci/h200.sh (the device tool carries .dev and .gl): a stripped release
# libvkcl.so and vkcl-clspv, the pyclspv wheel, the example programs, the integration-test
# executables (stripped, in .dev/deps.tar.xz), vkcl-bench and raw_vulkan. About 60 MiB.
# .gl/ (the Vulkan loader's .debs) is made once by the line in ../shared/GPU.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .dev && mkdir -p .dev/deps
cargo build --release
cargo build --release --example raw_vulkan
strip -o .dev/libvkcl.so target/release/libvkcl.so
strip -o .dev/vkcl-clspv target/release/vkcl-clspv
strip -o .dev/raw_vulkan target/release/examples/raw_vulkan
cp .clspv/*.whl .dev/
for src in examples/*.c; do
  cc -O2 -Wall "$src" -o ".dev/$(basename "$src" .c)" -lOpenCL -lm
done
bash bench/build.sh .dev/vkcl-bench
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
