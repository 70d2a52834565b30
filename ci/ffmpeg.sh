#!/usr/bin/env bash
# ffmpeg's OpenCL filters (Debian 12's ffmpeg 5.1) on vkcl on lavapipe, each compared frame by
# frame with the same command on pocl (ci/ffmpeg_check.py): every filter `ffmpeg -filters`
# lists as *_opencl, and openclsrc, on a few frames of ffmpeg's own synthetic sources
# (testsrc2, mandelbrot, smptehdbars) at small sizes, through hwupload/hwdownload with
# `-init_hw_device opencl=ocl:0.0`. Outputs must be byte-identical where the kernels move,
# compare or count samples, and within 1 of pocl's (with a PSNR bound) where they compute in
# float; tonemap_opencl, which pocl cannot run (no CL_RG images), is compared with a model of
# its kernel (ci/ffmpeg_tonemap.py); deshake_opencl by the camera path it estimates. A case
# fails if ffmpeg fails, if the device it opened is not vkcl's (pocl's for the pocl run) or if
# vkcl did not launch the kernels the case names.
#
#   ci/ffmpeg.sh [FILTER]        only the cases of FILTER (ids ffmpeg/FILTER/...), e.g. nlmeans_opencl
#   VKCL_ICD=/path/libvkcl.so ci/ffmpeg.sh     tests another build of the ICD
#   POCL_ICD=/path/libpocl.so.2 ci/ffmpeg.sh   another pocl
#
# Installs Debian's ffmpeg and pocl-opencl-icd if they are missing. Assumes `cargo build` has
# run (ci/env.sh selects target/debug/libvkcl.so as the only ICD and lavapipe as the only
# Vulkan driver). Writes target/conformance/ffmpeg.results (`<status> ffmpeg/<filter>/<case>`),
# then compares it with ci/expectations/ffmpeg.txt through ci/conformance.py and exits with
# its status. Work folder: target/ffmpeg/ (each run's ffmpeg log, stderr, check.log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)

pocl_lib() { dpkg -L libpocl2 2>/dev/null | grep -m1 '/libpocl\.so\.2$' || true; }
if ! command -v ffmpeg >/dev/null || [ -z "$(pocl_lib)" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    ffmpeg pocl-opencl-icd
fi
if ! grep -q ' avgblur_opencl ' <<< "$(ffmpeg -hide_banner -filters 2>/dev/null)"; then
  echo "ffmpeg.sh: this ffmpeg has no OpenCL filters" >&2
  exit 2
fi

source ci/env.sh
export VKCL_ICD="${VKCL_ICD:-$OCL_ICD_VENDORS}"
# pocl's library itself (ocl-icd loads the file OCL_ICD_VENDORS names), not its .icd file,
# which other tools' tests add and remove.
export POCL_ICD="${POCL_ICD:-$(pocl_lib)}"
if [ ! -f "$VKCL_ICD" ]; then
  echo "ffmpeg.sh: no ICD at $VKCL_ICD (run cargo build, or set VKCL_ICD)" >&2
  exit 2
fi
export FFMPEG_WORK="$root/target/ffmpeg"
rm -rf "$FFMPEG_WORK"
mkdir -p "$FFMPEG_WORK" target/conformance
echo "ffmpeg.sh: $(ffmpeg -version | head -n 1); vkcl $VKCL_ICD, pocl $POCL_ICD, Vulkan driver $VK_DRIVER_FILES"

set +e
python3 ci/ffmpeg_check.py target/conformance/ffmpeg.results "${1:-}" > "$FFMPEG_WORK/check.log" 2>&1
rc=$?
set -e
cut -c1-400 "$FFMPEG_WORK/check.log"
echo "ffmpeg.sh: ci/ffmpeg_check.py exit status $rc (log: target/ffmpeg/check.log)"
[ $rc -eq 0 ] || exit $rc

set +e
scope=(); [ -z "${1:-}" ] || scope=("ffmpeg/$1/")
python3 ci/conformance.py check ffmpeg target/conformance/ffmpeg.results "${scope[@]}" > "$FFMPEG_WORK/conformance.txt"
check=$?
set -e
cat "$FFMPEG_WORK/conformance.txt"
echo "ci/ffmpeg.sh: $(( $(date +%s) - start )) s"
exit $check
