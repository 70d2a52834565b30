#!/bin/bash
# vkcl on the H200 (the device tool's machine): clinfo, the examples, the integration tests, and
# clpeak. Runs there from the repository root, with two git-ignored folders carried:
#   .gl/   the Debian .debs of the Vulkan loader and its deps, ocl-icd, clinfo, clpeak
#          (../shared/GPU.md has the apt-get download line; add ocl-icd-libopencl1 clinfo clpeak,
#          and spirv-tools: tests/il_programs.rs assembles its modules with spirv-as)
#   .dev/  a release build: libvkcl.so, vkcl-clspv, libclspv.so.xz (or the pyclspv wheel), the examples built with cc
#          (bandwidth too), and the integration-test executables in .dev/deps/
#          (cargo test --release --no-run), or .dev/deps.tar.xz; for the vkclbench part also vkcl-bench
#          (bash bench/build.sh .dev/vkcl-bench) and raw_vulkan
#          (cargo build --release --example raw_vulkan;
#          strip -o .dev/raw_vulkan target/release/examples/raw_vulkan: 1 MB instead of 13)
#   .pyw/  instead of .dev/ for the pyopencl part (bash ci/h200-prepare.sh pyopencl): libvkcl.so,
#          vkcl-clspv, libclspv.so.xz, and the wheels and sdist ci/pyopencl.sh installs offline
# Results go to $OUT. docs/GPU.md has the figures of the last runs.
# Arguments choose the parts (default: all but pyopencl): tests svmprobe svm latency clpeak
# bandwidth bench vkclbench pyopencl fault multi; VKCL_BENCH_ONLY=GROUPS limits vkclbench to those
# vkcl-bench groups.
set -u
parts=" ${*:-tests svmprobe svm latency clpeak bandwidth bench vkclbench} "
want() { [[ "$parts" == *" $1 "* ]]; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# The tests read files of the repository (tests/common repo_file) from here.
export VKCL_REPO_DIR=$PWD
D=$PWD/.dev; want pyopencl && D=$PWD/.pyw
# .pyw/ carries vkcl xz'd too (the device tool's 64 MiB).
for x in libvkcl.so vkcl-clspv; do
  [ -f $D/$x.xz ] && { xz -dc $D/$x.xz > $D/$x; chmod +x $D/$x; }
done
if [ -f $D/libclspv.so.xz ]; then xz -dc $D/libclspv.so.xz > $D/libclspv.so; else
python3 -c "import zipfile,glob;z=zipfile.ZipFile(glob.glob('$D/*.whl')[0]);n=[x for x in z.namelist() if x.endswith('.so')][0];open('$D/libclspv.so','wb').write(z.read(n))"
fi
# Debian's ocl-icd first (CUDA ships its own libOpenCL.so.1 that ignores OCL_ICD_VENDORS).
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/nv; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/nv/nvidia.icd
export OCL_ICD_VENDORS=$D/libvkcl.so
# clang-16 for device-side enqueue, carried by ci/h200-prepare.sh (libclang-cpp.so.16 is here).
[ -x $PWD/.dev/clang16/bin/clang ] && export VKCL_CLANG=${VKCL_CLANG:-$PWD/.dev/clang16/bin/clang}
echo "== vulkan"; vulkaninfo --summary 2>&1 | grep -E "deviceName|driverName|apiVersion" | head; VKCL_LOG=info clinfo -l 2>&1 | head
echo "== clinfo vkcl"; clinfo 2>&1 | tee $OUT/clinfo-vkcl.txt | grep -E "Device Name|Max compute|Global memory size|Max memory alloc|error|Invalid" | head
[ -x $D/vector_add ] && { echo "== examples"; $D/vector_add; $D/reduction; }
if want tests; then
  echo "== tests"
  [ -f $D/deps.tar.xz ] && tar -C $D -xJf $D/deps.tar.xz
  # Each executable under $T seconds (default 60; a hang shows as "timed out"), its whole output
  # kept in $OUT/tests/ when it fails.
  mkdir -p $OUT/tests
  cd $D/deps && for t in *; do
    VKCL_VALIDATION=0 timeout ${T:-60} ./$t --test-threads=2 > $OUT/tests/$t.txt 2>&1; rc=$?
    { echo "$t: exit $rc"; [ $rc = 124 ] && echo "$t: timed out"
      grep -E "^test result|FAILED|panicked" $OUT/tests/$t.txt; } | tee -a $OUT/tests.txt
    # The device tool brings back files of limited size: the panics and the end of the output.
    if [ $rc = 0 ]; then rm $OUT/tests/$t.txt; else
      { grep -A3 panicked $OUT/tests/$t.txt | head -150; echo ...; tail -80 $OUT/tests/$t.txt; } \
        > $OUT/tests/$t.short && mv $OUT/tests/$t.short $OUT/tests/$t.txt
    fi
  done; cd - >/dev/null
fi
if want svmprobe; then
  # examples/svm_probe.rs (docs/GPU.md): device addresses per memory kind, host ranges there,
  # capture-replay and VK_EXT_map_memory_placed, and two VkDevices sharing memory through an
  # opaque fd, for SVM on this driver (`cargo build --release --example svm_probe`, stripped
  # into .dev/svm_probe).
  echo "== svm_probe"; timeout 60 $D/svm_probe 2>&1 | tee $OUT/svm_probe.txt | tail -40
fi
if want multi; then
  # Issue 22: one GPU as two devices (VKCL_DEVICE_COPIES=2, each its own VkDevice): the
  # multi-device tests in every buffer mode, and the triad in a two-device context against a
  # one-device context (auto: one device-local allocation both VkDevices import as an opaque
  # fd; copies: each device's own memory, moved through host memory; shared: host memory both
  # import).
  echo "== multi"
  [ -d $D/deps ] || tar -C $D -xJf $D/deps.tar.xz
  for m in auto copies shared; do
    VKCL_MULTI_DEVICE=$m VKCL_VALIDATION=0 timeout 120 $D/deps/multi_device --test-threads=1 2>&1 |
      grep -E "^test result|FAILED|panicked" | sed "s/^/VKCL_MULTI_DEVICE=$m: /"
    echo "VKCL_MULTI_DEVICE=$m:"; VKCL_DEVICE_COPIES=2 VKCL_MULTI_DEVICE=$m timeout 120 $D/multi_triad 256 2>&1 | tail -4
    [ -x $D/multi_split ] && VKCL_DEVICE_COPIES=2 VKCL_MULTI_DEVICE=$m timeout 120 $D/multi_split 256 2>&1 | tail -2
  done | tee $OUT/multi.txt
fi
if want svm; then
  # Issue 18: coarse-grained SVM as host-visible memory too (the default on a discrete GPU is
  # device memory mirrored on the host), and the triad over SVM against cl_mem both ways.
  echo "== svm"
  [ -d $D/deps ] || tar -C $D -xJf $D/deps.tar.xz
  VKCL_SVM_COARSE=host VKCL_VALIDATION=0 timeout 60 $D/deps/svm --test-threads=2 2>&1 |
    grep -E "^test result|FAILED|panicked" | sed 's/^/VKCL_SVM_COARSE=host: /'
  for m in auto host; do
    echo "VKCL_SVM_COARSE=$m:"; VKCL_SVM_COARSE=$m timeout 120 $D/svm_triad 1024 2>&1 | tail -4
  done | tee $OUT/svm_triad.txt
fi
if want latency; then
  # Issue 21: where clpeak's launch latency goes (tools/diag/latency.c), vkcl then NVIDIA,
  # and raw Vulkan's floor under it (raw_vulkan --latency).
  echo "== latency"
  { for icd in $D/libvkcl.so /tmp/nv/nvidia.icd; do OCL_ICD_VENDORS=$icd timeout 60 $D/latency; done
    timeout 60 $D/raw_vulkan --latency; } 2>&1 | tee $OUT/latency.txt
fi
if want clpeak; then
  # vkcl, then NVIDIA's OpenCL in the same run (docs/GPU.md compares them).
  echo "== clpeak vkcl"
  timeout 200 clpeak --global-bandwidth --compute-sp --compute-dp --compute-integer --kernel-latency 2>&1 |
    tee $OUT/clpeak-vkcl.txt | tail -30
  echo "== clpeak NVIDIA"
  OCL_ICD_VENDORS=/tmp/nv/nvidia.icd timeout 200 clpeak --global-bandwidth --compute-sp --compute-integer \
    --compute-dp --kernel-latency 2>&1 | tee $OUT/clpeak-nvidia.txt | tail -30
fi
if want bandwidth; then
  echo "== bandwidth (docs/MEMORY.md): vkcl, then NVIDIA's OpenCL"
  OCL_ICD_VENDORS=$D/libvkcl.so timeout 150 $D/bandwidth vkcl 256 2>&1 | tee $OUT/bandwidth-vkcl.txt
  OCL_ICD_VENDORS=$D/libvkcl.so timeout 60 $D/bandwidth vkcl 256 device 2>&1 | tee $OUT/bandwidth-vkcl-device.txt
  OCL_ICD_VENDORS=/tmp/nv/nvidia.icd timeout 150 $D/bandwidth "NVIDIA CUDA" 256 2>&1 | tee $OUT/bandwidth-native.txt
fi
if want bench; then
  # docs/BENCHMARKS.md: build, launch and out-of-order figures, vkcl then NVIDIA's OpenCL.
  for icd in $D/libvkcl.so /tmp/nv/nvidia.icd; do
    echo "== benchmarks through $icd"
    for b in build_time launch_overhead out_of_order; do
      OCL_ICD_VENDORS=$icd timeout 120 $D/$b 2>&1 | tee -a $OUT/bench-$(basename $icd).txt
    done
  done
  echo "== launch_overhead through vkcl with VKCL_WAIT_SPIN_US=0 (waits sleep at once)"
  VKCL_WAIT_SPIN_US=0 OCL_ICD_VENDORS=$D/libvkcl.so timeout 120 $D/launch_overhead 2>&1 |
    tee $OUT/bench-nospin.txt
fi
if want vkclbench; then
  # docs/BENCHMARKS.md: vkcl-bench on vkcl and on NVIDIA's OpenCL in one run, and the raw-Vulkan
  # baseline; JSON and the table in $OUT/vkclbench (plot here: bash bench/plot.sh DIR).
  echo "== vkcl-bench: vkcl against NVIDIA's OpenCL"
  # VKCL_BENCH_ONLY=GROUPS (e.g. cmdbuf,launch) runs only those groups.
  timeout 540 python3 bench/compare.py run --out $OUT/vkclbench --bench $D/vkcl-bench \
    --impl vkcl=$D/libvkcl.so:vkcl --impl "nvidia=/tmp/nv/nvidia.icd:NVIDIA CUDA" \
    ${VKCL_BENCH_ONLY:+--only $VKCL_BENCH_ONLY} \
    --raw-vulkan $D/raw_vulkan > $OUT/vkclbench.log 2>&1
  echo "vkcl-bench: exit $?"; tail -90 $OUT/vkclbench.log
fi
if want fault; then
  # Last: a kernel that writes 1 TiB past its SVM allocation (tools/diag/fault.c), to see that
  # the waits for it end with an error rather than hang.
  echo "== fault"; timeout 150 $D/fault ok 2>&1; timeout 150 $D/fault 2>&1 | tee $OUT/fault.txt
fi
if want pyopencl; then
  # pyopencl's suite as CI runs it (ci/pyopencl.sh; scipy is not carried, so its two complex
  # Bessel/Hankel tests skip); results and log in $OUT.
  echo "== pyopencl"
  VKCL_ICD=$D/libvkcl.so VKCL_VK_DRIVER=$VK_DRIVER_FILES PYOPENCL_WHEELS=$D/wheels \
    PYOPENCL_WORKERS=8 timeout 560 bash ci/pyopencl.sh 2>&1 | tail -40
  cp target/conformance/pyopencl.results target/pyopencl/pytest.log $OUT/
fi
