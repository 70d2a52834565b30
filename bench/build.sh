#!/usr/bin/env bash
# Builds vkcl-bench (plain C against the OpenCL headers and the ICD loader) into
# target/bench/vkcl-bench, or into $1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/bench/vkcl-bench}
mkdir -p "$(dirname "$out")"
cc -O2 -Wall -Wextra -std=gnu11 "$root"/bench/*.c -o "$out" -lOpenCL -lm -pthread
