#!/usr/bin/env bash
# Installs vkcl system-wide and registers it with the OpenCL ICD loader (Linux).
#   icd/install.sh [PREFIX]        (default /usr/local; needs root for /etc/OpenCL/vendors)
# Installs PREFIX/lib/vkcl/{libvkcl.so, vkcl-clspv, libclspv.so} and /etc/OpenCL/vendors/vkcl.icd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-/usr/local}
dest="$prefix/lib/vkcl"
(cd "$root" && cargo build --release)
[ -f "$root/.clspv/libclspv.so" ] || bash "$root/ci/setup.sh"
install -d "$dest" /etc/OpenCL/vendors
install -m 755 "$root/target/release/libvkcl.so" "$root/target/release/vkcl-clspv" "$dest/"
install -m 644 "$root/.clspv/libclspv.so" "$dest/"
[ -f "$root/.clspv/LICENSE.clspv" ] && install -m 644 "$root/.clspv/LICENSE.clspv" "$dest/"
echo "$dest/libvkcl.so" > /etc/OpenCL/vendors/vkcl.icd
echo "installed vkcl in $dest and registered /etc/OpenCL/vendors/vkcl.icd"
