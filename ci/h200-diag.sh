#!/bin/bash
# Diagnostics on the H200 (the device tool's machine), carrying .gl and .dev (ci/h200-prepare.sh):
# the integration-test executables named in $TESTS (name[:filter], default none) with their
# full output, each under $T seconds (default 40), and the vkcl-bench groups in $GROUPS (default
# none) on vkcl and NVIDIA's OpenCL. Output in $OUT.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# The tests read files of the repository (tests/common repo_file) from here.
export VKCL_REPO_DIR=$PWD
D=$PWD/.dev; xz -dc $D/libclspv.so.xz > $D/libclspv.so
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu OCL_ICD_VENDORS=$D/libvkcl.so VKCL_VALIDATION=0
mkdir -p /tmp/nv; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/nv/nvidia.icd
tar -C $D -xJf $D/deps.tar.xz
for t in ${TESTS:-}; do
  name=${t%%:*}; filter=${t#*:}; [ "$filter" = "$t" ] && filter=
  log=$OUT/$name${filter:+-$filter}.txt
  (cd $D/deps && timeout ${T:-40} ./$name $filter --test-threads=1 --nocapture > $log 2>&1)
  echo "$name $filter: exit $?"
done
if [ -n "${GROUPS_:-}" ]; then
  timeout 300 python3 bench/compare.py run --out $OUT/bench --bench $D/vkcl-bench --reps 5 \
    --only "$GROUPS_" --impl vkcl=$D/libvkcl.so:vkcl --impl "nvidia=/tmp/nv/nvidia.icd:NVIDIA CUDA" \
    > $OUT/bench.log 2>&1
  echo "bench: exit $?"; grep -E "^\| ($(echo $GROUPS_ | tr , '|')) " $OUT/bench/results.md
fi
grep -hE "test result|FAILED|panicked|^test " $OUT/*.txt 2>/dev/null | tail -30
