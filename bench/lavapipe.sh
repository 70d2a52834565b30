#!/usr/bin/env bash
# The lavapipe comparison of docs/BENCHMARKS.md, in one run: vkcl (release build, lavapipe as the
# only Vulkan driver) against pocl on the same CPU, with the raw-Vulkan baseline; then the plots.
# Installs pocl (Debian's pocl-opencl-icd) if missing. Results in target/bench/lavapipe/
# (results.md, results.json, *.png). Extra arguments go to compare.py run (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
if ! dpkg-query -W -f='${Status}' pocl-opencl-icd 2>/dev/null | grep -q "install ok installed"; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends pocl-opencl-icd
fi
source ci/env.sh
cargo build --release
cargo build --release --example raw_vulkan
bash bench/build.sh
python3 bench/compare.py run --out target/bench/lavapipe "$@" \
  --impl vkcl=target/release/libvkcl.so:vkcl --impl pocl=/etc/OpenCL/vendors/pocl.icd:Portable \
  --raw-vulkan target/release/examples/raw_vulkan
bash bench/plot.sh target/bench/lavapipe
