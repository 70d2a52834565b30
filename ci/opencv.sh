#!/usr/bin/env bash
# OpenCV's OpenCL path (opencv-python-headless from PyPI, cv2.UMat with OpenCL on) against
# vkcl on lavapipe: ci/opencv_check.py runs the common image operations (blur, GaussianBlur,
# resize, cvtColor, Canny, matchTemplate, warpAffine, dft, morphology, threshold, arithmetic)
# with OpenCL on and compares each with the same operation with OpenCL off. A case fails if a
# result differs beyond OpenCV's own test tolerance, if a program fails to build, or if the
# kernels it names were not launched on vkcl (OpenCV then ran its CPU code instead).
#
#   ci/opencv.sh [OP]         only the cases of operation OP (ids opencv/OP/...), e.g. blur
#   VKCL_ICD=/path/libvkcl.so ci/opencv.sh     tests another build of the ICD
#
# Assumes `cargo build` has run (ci/env.sh selects target/debug/libvkcl.so as the only ICD and
# lavapipe as the only Vulkan driver). Writes target/conformance/opencv.results
# (`<status> opencv/<op>/<case>`), then compares it with ci/expectations/opencv.txt through
# ci/conformance.py and exits with its status. Work folder: target/opencv/ (venv, log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)

# Pinned versions (checked together on Debian 12, Python 3.11; opencv-python-headless 4.12
# wants numpy < 2.3).
pins=(opencv-python-headless==4.12.0.88 numpy==2.2.6)

if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-venv
fi

work="$root/target/opencv"
venv="$work/venv"
mkdir -p "$work" "$root/target/conformance"
stamp="$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-16)"
if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: "${pins[@]}"
  echo "$stamp" > "$venv/.pins"
fi

source ci/env.sh
export OCL_ICD_VENDORS="${VKCL_ICD:-$OCL_ICD_VENDORS}"
if [ ! -f "$OCL_ICD_VENDORS" ]; then
  echo "opencv.sh: no ICD at $OCL_ICD_VENDORS (run cargo build, or set VKCL_ICD)" >&2
  exit 2
fi
# OpenCV's device string is <platform>:<type>:<device>. OpenCV picks GPU-type devices by
# default and lavapipe is a CPU device (ci/env.sh makes it the only one): the first CPU device.
# ci/opencv_check.py checks that the device OpenCV uses is vkcl's.
export OPENCV_OPENCL_DEVICE="${OPENCV_OPENCL_DEVICE:-:CPU:0}"
# Build failures are logged from DEBUG on; vkcl logs each kernel launch at launch=debug.
export OPENCV_LOG_LEVEL=DEBUG VKCL_LOG=launch=debug
# OpenCV's own cache of program binaries off: every program is built from source each run.
export OPENCV_OPENCL_CACHE_ENABLE=0
echo "opencv.sh: ICD $OCL_ICD_VENDORS, Vulkan driver $VK_DRIVER_FILES, device $OPENCV_OPENCL_DEVICE"

set +e
"$venv/bin/python" ci/opencv_check.py target/conformance/opencv.results "${1:-}" > "$work/check.log" 2>&1
rc=$?
set -e
grep -E "^(fail|opencv_check)" "$work/check.log" | cut -c1-300 || true
echo "opencv.sh: ci/opencv_check.py exit status $rc (log: target/opencv/check.log)"
[ $rc -eq 0 ] || exit $rc

set +e
scope=(); [ -z "${1:-}" ] || scope=("opencv/$1/")
python3 ci/conformance.py check opencv target/conformance/opencv.results "${scope[@]}" > "$work/conformance.txt"
check=$?
set -e
cat "$work/conformance.txt"
echo "ci/opencv.sh: $(( $(date +%s) - start )) s"
exit $check
