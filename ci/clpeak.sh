#!/usr/bin/env bash
# clpeak (Debian) against vkcl on lavapipe as a smoke run: every clpeak test must run to the
# end (about 45 s on 2 cores). Figures are printed and kept, never asserted (they are not
# benchmarks of record here; see docs/GPU.md and the benchmark issue).
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/env.sh
export OCL_ICD_VENDORS="${VKCL_ICD:-$OCL_ICD_VENDORS}"
mkdir -p target/conformance
start=$(date +%s)
timeout 600 clpeak > target/conformance/clpeak.txt 2>&1 || { cat target/conformance/clpeak.txt; echo "clpeak.sh: clpeak failed"; exit 1; }
cat target/conformance/clpeak.txt
grep -q "Kernel launch latency" target/conformance/clpeak.txt || { echo "clpeak.sh: clpeak did not finish"; exit 1; }
echo "clpeak.sh: $(( $(date +%s) - start )) s"
