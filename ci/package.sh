#!/usr/bin/env bash
# Packages a release build of vkcl (issue 23):
#   target/package/vkcl_<version>_amd64.deb           for Debian and Ubuntu (dpkg -i / apt install ./...)
#   target/package/vkcl-<version>-linux-x86_64.tar.gz  for other distributions, no root needed
# Both hold libvkcl.so, the vkcl-clspv compiler helper and the clspv library (with its licence):
# the .deb under /usr/lib/x86_64-linux-gnu/vkcl/ with /etc/OpenCL/vendors/vkcl.icd and
# /usr/bin/vkcl-info; the tarball in vkcl-<version>/lib/ with a README on how to register it.
# Usage: bash ci/package.sh   (runs ci/setup.sh first for clspv and the toolchain's packages)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ -f .clspv/libclspv.so ] && [ -f .clspv/clspv.version ] || bash ci/setup.sh
command -v dpkg-deb >/dev/null
cargo build --release
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
out=$root/target/package
rm -rf "$out" && mkdir -p "$out"

# The files of an installation, into $1 (the library directory) and $2 (the docs directory).
payload() {
  install -d "$1" "$2"
  strip -o "$1/libvkcl.so" target/release/libvkcl.so
  strip -o "$1/vkcl-clspv" target/release/vkcl-clspv
  chmod 755 "$1/vkcl-clspv"
  install -m 644 .clspv/libclspv.so .clspv/clspv.version "$1/"
  install -m 644 README.md "$2/README.md"
  install -m 644 LICENSE "$2/LICENSE"
  install -m 644 .clspv/LICENSE.clspv "$2/LICENSE.clspv"
}

# --- the Debian package
deb=$out/deb
lib=/usr/lib/x86_64-linux-gnu/vkcl
payload "$deb$lib" "$deb/usr/share/doc/vkcl"
install -d "$deb/etc/OpenCL/vendors" "$deb/usr/bin" "$deb/DEBIAN"
echo "$lib/libvkcl.so" > "$deb/etc/OpenCL/vendors/vkcl.icd"
ln -s "$lib/vkcl-clspv" "$deb/usr/bin/vkcl-info"
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: vkcl"
  echo
  echo "Files: *"
  echo "License: Apache-2.0"
  echo "Comment: vkcl itself; /usr/share/doc/vkcl/LICENSE"
  echo
  echo "Files: usr/lib/x86_64-linux-gnu/vkcl/libclspv.so"
  echo "License: Apache-2.0 WITH LLVM-exception"
  echo "Comment: clspv with clang and LLVM built in ($(cat .clspv/clspv.version));"
  echo " /usr/share/doc/vkcl/LICENSE.clspv"
} > "$deb/usr/share/doc/vkcl/copyright"
size=$(du -sk --exclude=DEBIAN "$deb" | cut -f1)
cat > "$deb/DEBIAN/control" <<EOF
Package: vkcl
Version: $version
Architecture: amd64
Maintainer: $(git log -1 --format='%an <%ae>' 2>/dev/null || echo 'vkcl developers <vkcl@localhost>')
Installed-Size: $size
Depends: libc6 (>= 2.31), libgcc-s1, libvulkan1, ocl-icd-libopencl1 | libopencl1
Recommends: mesa-vulkan-drivers | vulkan-icd
Suggests: clinfo
Provides: opencl-icd
Section: libs
Priority: optional
Description: OpenCL 3.0 on any Vulkan device
 vkcl is an OpenCL implementation (an ICD for the OpenCL ICD loader) that runs
 OpenCL programs on any Vulkan 1.2 device, including Mesa's lavapipe on machines
 without a GPU. OpenCL C is compiled to Vulkan SPIR-V by clspv, which this
 package includes. Run vkcl-info to see what it found.
EOF
dpkg-deb --root-owner-group --build "$deb" "$out/vkcl_${version}_amd64.deb" >/dev/null

# --- the tarball
name=vkcl-$version
tree=$out/tar/$name
payload "$tree/lib" "$tree"
cat > "$tree/INSTALL.md" <<'EOF'
# vkcl without root

Unpack anywhere, then, in the shell that runs your OpenCL programs:

    export OCL_ICD_VENDORS=$PWD/vkcl-VERSION/lib/libvkcl.so     # ocl-icd (Debian, Ubuntu, Fedora)
    export OCL_ICD_FILENAMES=$PWD/vkcl-VERSION/lib/libvkcl.so   # the Khronos ICD loader

(ocl-icd's OCL_ICD_VENDORS takes an ICD library, an .icd file or a directory of them, and then
ignores /etc/OpenCL/vendors.) `vkcl-VERSION/lib/vkcl-clspv --info` prints what vkcl finds.
vkcl needs the Vulkan loader (libvulkan.so.1) and a Vulkan driver: Mesa's lavapipe
(mesa-vulkan-drivers) on machines without a GPU. To use vkcl system-wide instead, put the
library's path in /etc/OpenCL/vendors/vkcl.icd.
EOF
sed -i "s/VERSION/$version/g" "$tree/INSTALL.md"
tar -C "$out/tar" -czf "$out/$name-linux-x86_64.tar.gz" "$name"
rm -rf "$out/tar" "$deb"
ls -l "$out"
