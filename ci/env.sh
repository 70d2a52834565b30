# Sourced by the ci/ scripts: the environment that makes vkcl the only ICD, on lavapipe.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TERM_COLOR=never
# ocl-icd (Debian 12) honours OCL_ICD_VENDORS: the path of one ICD library.
export OCL_ICD_VENDORS="$root/target/debug/libvkcl.so"
# Only Mesa's lavapipe, whatever else the machine has (VKCL_VK_DRIVER names another driver's
# manifest: ci/h200.sh runs ci/pyopencl.sh on NVIDIA's).
export VK_DRIVER_FILES=${VKCL_VK_DRIVER:-$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1)}
export VK_ICD_FILENAMES="$VK_DRIVER_FILES"
