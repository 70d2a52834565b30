# Sourced by the ci/ scripts: the environment that makes vkcl the only ICD, on lavapipe.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TERM_COLOR=never
# ocl-icd (Debian 12) honours OCL_ICD_VENDORS: the path of one ICD library.
export OCL_ICD_VENDORS="$root/target/debug/libvkcl.so"
# Only Mesa's lavapipe, whatever else the machine has.
export VK_DRIVER_FILES=$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1)
export VK_ICD_FILENAMES="$VK_DRIVER_FILES"
