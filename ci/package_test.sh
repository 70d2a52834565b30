#!/usr/bin/env bash
# Issue 23's acceptance, on this machine (as root, or through sudo):
#  1. ci/package.sh builds the .deb and the tarball;
#  2. the README's CI recipe (the sh block after "<!-- ci-recipe -->") runs literally, in
#     target/package: it installs lavapipe and the .deb; then clinfo and an example program run
#     through the system's ICD registry with no OpenCL variables set, and `dpkg -r vkcl` leaves
#     none of the package's files behind;
#  3. the tarball, unpacked by an unprivileged user, runs clinfo and the example through
#     OCL_ICD_VENDORS.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail() { echo "package_test: FAILED: $*"; exit 1; }
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"  # the recipe, dpkg -r and setpriv need root
bash ci/package.sh
pkg=$root/target/package
work=$(mktemp -d /tmp/vkcl-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cc -O2 -Wall examples/vector_add.c -o "$work/vector_add" -lOpenCL

# A shell with no OpenCL or vkcl variables (ci/env.sh sets some): what a CI job starts with.
clean() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" "$@"; }
mkdir -p "$work/home"

# --- 2. the README's recipe, literally
recipe=$work/recipe.sh
awk '/<!-- ci-recipe -->/{on=1; next} on && /^```sh/{inblock=1; next} inblock && /^```/{exit} inblock' \
  README.md > "$recipe"
[ -s "$recipe" ] || fail "no recipe block in README.md"
echo "== the README's recipe:"; cat "$recipe"
(cd "$pkg" && $sudo env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  bash -euxo pipefail "$recipe") || fail "the README's recipe"
dpkg -s vkcl >/dev/null || fail "the recipe did not install vkcl"
clean clinfo -l | tee "$work/clinfo.txt"
grep -q "Platform #.*: vkcl" "$work/clinfo.txt" || fail "clinfo does not list vkcl from /etc/OpenCL/vendors"
clean "$work/vector_add" | tee "$work/example.txt"
grep -q "vector_add: verified" "$work/example.txt" || fail "vector_add through the installed package"
clean vkcl-info | tee "$work/info.txt"
grep -q "^devices: [1-9]" "$work/info.txt" || fail "vkcl-info finds no device"
files=$(dpkg -L vkcl | while read -r f; do [ -d "$f" ] || echo "$f"; done)
$sudo dpkg -r vkcl
for f in $files; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is left after dpkg -r vkcl"
done
for d in /usr/lib/x86_64-linux-gnu/vkcl /usr/share/doc/vkcl; do
  [ ! -e "$d" ] || fail "$d is left after dpkg -r vkcl"
done
echo "== dpkg -r vkcl: none of its $(echo "$files" | wc -w) files left"

# --- 3. the tarball, without root
tar -C "$work" -xzf "$pkg"/vkcl-*-linux-x86_64.tar.gz
chmod -R a+rX "$work"
lib=$(echo "$work"/vkcl-*/lib)
as_user() { $sudo setpriv --reuid=nobody --regid=nogroup --clear-groups env -i PATH=/usr/bin:/bin HOME="$work/home-nobody" "$@"; }
mkdir -p "$work/home-nobody" && $sudo chown nobody "$work/home-nobody"
as_user OCL_ICD_VENDORS="$lib/libvkcl.so" clinfo -l | grep -q "Platform #.*: vkcl" ||
  fail "clinfo through OCL_ICD_VENDORS (tarball, user nobody)"
as_user OCL_ICD_VENDORS="$lib/libvkcl.so" "$work/vector_add" | grep -q "vector_add: verified" ||
  fail "vector_add through the tarball (user nobody)"
as_user "$lib/vkcl-clspv" --info | grep -q "^clspv: $lib/libclspv.so" ||
  fail "the tarball's helper does not find its own clspv"
echo "package_test: the .deb (README recipe, clinfo, example, removal) and the tarball (user nobody) pass"
