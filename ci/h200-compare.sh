#!/bin/bash
# vkcl-bench groups with several vkcl builds on the H200 (the device tool's machine), to tell a
# change's effect from noise: run there from the repository root, carrying .gl and .dev, with
# .dev/<label>/{libvkcl.so,vkcl-clspv} for each build to compare (made here with
# `git worktree add --detach DIR COMMIT; cd DIR; CARGO_TARGET_DIR=<repo>/target cargo build
# --release`, then strip both into .dev/<label>/) beside ci/h200-prepare.sh's .dev.
# Usage: bash ci/h200-compare.sh GROUPS LABEL... (the current build is .dev itself: label now).
# The program cache is off (VKCL_CACHE=0), so that no build loads another's SPIR-V. The first
# build measured runs on a GPU still ramping up: run twice, in both orders, before reading
# launch figures (docs/BENCHMARKS.md).
set -u
groups=$1; shift
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
D=$PWD/.dev
xz -dc $D/libclspv.so.xz > $D/libclspv.so
impls=()
for l in "$@"; do
  if [ "$l" = now ]; then impls+=(--impl "now=$D/libvkcl.so:vkcl"); continue; fi
  cp $D/libclspv.so $D/$l/
  impls+=(--impl "$l=$D/$l/libvkcl.so:vkcl")
done
export VKCL_CACHE=0
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
timeout 500 python3 bench/compare.py run --out $OUT/cmp --bench $D/vkcl-bench --reps 5 \
  --only "$groups" "${impls[@]}" > $OUT/cmp.log 2>&1
echo "exit $?"; grep -E "^\| (compute|images|launch|memory|transfer|build) " $OUT/cmp/results.md 2>/dev/null || tail -30 $OUT/cmp.log
