#!/usr/bin/env bash
# README command (1): set up, build vkcl, and run real OpenCL programs through the ICD loader on
# lavapipe: clinfo, then the example programs in examples/ (the bandwidth benchmark briefly),
# then vkcl-bench with --quick settings (ci/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
source ci/env.sh
cargo build
echo "== clinfo (vkcl as the only ICD)"
clinfo
mkdir -p examples/bin
for src in examples/*.c; do
  exe="examples/bin/$(basename "$src" .c)"
  cc -O2 -Wall "$src" -o "$exe" -lOpenCL
  echo "== $exe"
  case "$exe" in
    */bandwidth) "$exe" vkcl 16 ;;  # a short run: sizes up to 16 MiB
    *) "$exe" ;;
  esac
done
echo "== vkcl-bench (quick)"
bash ci/bench.sh
