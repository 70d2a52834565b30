#!/usr/bin/env bash
# Idempotent set-up on Debian 12: the system packages vkcl's build, examples and tests need,
# and the clspv shared object (from the PyPI wheel pyclspv, checked by sha256) in .clspv/.
# Runs as root, or through sudo when not root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"

packages=(
  mesa-vulkan-drivers libvulkan1 vulkan-tools vulkan-validationlayers
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo
  spirv-tools gcc python3-pip python3-venv clpeak llvm-spirv-15 clang-15
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# lavapipe from Debian 12's backports (Mesa 25): Mesa 22.3's lavapipe loses updates in
# compare-and-swap loops and stops some loops after 64 iterations (docs/LAVAPIPE.md).
MESA_VERSION=25.0.7-2~bpo12+1
if [ "$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null)" != "$MESA_VERSION" ]; then
  list=/etc/apt/sources.list.d/vkcl-bookworm-backports.list
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $sudo tee "$list" >/dev/null
  fi
  echo "setup: installing mesa-vulkan-drivers $MESA_VERSION (bookworm-backports)"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    -t bookworm-backports "mesa-vulkan-drivers=$MESA_VERSION"
fi

# clspv: the shared object inside the pyclspv wheel (Apache-2.0; clspv, clang and LLVM built in).
wheel=pyclspv-0.0.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
sha=0ad1232d810c25bc09cafca77a8d35e35e6d38c36927c9ce109e6e75c609949b
dest="$root/.clspv"
if [ ! -f "$dest/libclspv.so" ] || [ "$(cat "$dest/wheel.sha256" 2>/dev/null)" != "$sha" ]; then
  mkdir -p "$dest"
  if [ ! -f "$dest/$wheel" ] || ! echo "$sha  $dest/$wheel" | sha256sum -c --quiet - 2>/dev/null; then
    python3 -m pip download --quiet --no-deps --only-binary :all: --python-version 3.11 \
      --platform manylinux_2_28_x86_64 pyclspv==0.0.1 -d "$dest"
  fi
  echo "$sha  $dest/$wheel" | sha256sum -c --quiet -
  python3 - "$dest/$wheel" "$dest" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    so = [n for n in z.namelist() if n.endswith(".so")]
    assert len(so) == 1, so
    with z.open(so[0]) as src, open(dest + "/libclspv.so.tmp", "wb") as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
    lic = [n for n in z.namelist() if n.endswith("LICENSE")]
    if lic:
        open(dest + "/LICENSE.clspv", "wb").write(z.read(lic[0]))
PY
  mv "$dest/libclspv.so.tmp" "$dest/libclspv.so"
  echo "$sha" > "$dest/wheel.sha256"
fi
# What vkcl-info reports as clspv's version (the library has no version string).
echo "pyclspv 0.0.1 (PyPI wheel, sha256 ${sha:0:16})" > "$dest/clspv.version"
echo "setup: clspv at $dest/libclspv.so"
