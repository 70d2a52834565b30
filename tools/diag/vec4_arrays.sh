#!/bin/bash
# compiler::vec4_arrays on NVIDIA (issue 21), on the device tool's machine from the repository
# root, with .gl and .dev carried as for ci/h200.sh (`bash ci/h200-prepare.sh`, then
# `cc -O2 tools/diag/wide_loads.c -o .dev/wide_loads -lOpenCL -lm` for the probe):
#   bash tools/diag/vec4_arrays.sh
# tests/vec4_arrays{,_off} on the GPU, then clpeak's global bandwidth with VKCL_VEC4_ARRAYS=0
# and 1 alternating (twice each), NVIDIA's OpenCL, and tools/diag/wide_loads both ways.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
D=$PWD/.dev
for x in libvkcl.so vkcl-clspv; do
  [ -f $D/$x.xz ] && { xz -dc $D/$x.xz > $D/$x; chmod +x $D/$x; }
done
xz -dc $D/libclspv.so.xz > $D/libclspv.so
[ -f $D/deps.tar.xz ] && tar -C $D -xJf $D/deps.tar.xz
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/nv; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/nv/nvidia.icd
export OCL_ICD_VENDORS=$D/libvkcl.so VKCL_CACHE=0
nvidia-smi -L
for t in vec4_arrays vec4_arrays_off; do
  echo "== $t"
  VKCL_VALIDATION=0 timeout 120 $D/deps/$t --test-threads=2 2>&1 | grep -E "test result|panicked"
done
for v in 0 1 0 1; do
  echo "== clpeak VKCL_VEC4_ARRAYS=$v"
  VKCL_VEC4_ARRAYS=$v timeout 150 clpeak --global-bandwidth 2>&1 | grep float
done
echo "== clpeak NVIDIA"
OCL_ICD_VENDORS=/tmp/nv/nvidia.icd timeout 150 clpeak --global-bandwidth 2>&1 | grep float
if [ -x $D/wide_loads ]; then
  for v in 0 1; do
    echo "== wide_loads VKCL_VEC4_ARRAYS=$v"
    VKCL_VEC4_ARRAYS=$v timeout 150 $D/wide_loads 2>&1 | tail -8
  done
fi
