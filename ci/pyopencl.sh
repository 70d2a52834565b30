#!/usr/bin/env bash
# pyopencl's own test suite (the test/ folder of its sdist) against vkcl on lavapipe.
#
#   ci/pyopencl.sh          CI mode: the test files in CI_FILES below
#   ci/pyopencl.sh --full   every test file of the sdist (FULL_FILES)
#
# Assumes `cargo build` has run: ci/env.sh selects target/debug/libvkcl.so as the only ICD and
# lavapipe as the only Vulkan driver. VKCL_ICD=/path/to/libvkcl.so tests another build instead.
#
# Writes target/conformance/pyopencl.results (`<status> <test id>` per test; the test id is the
# pytest node id with the device parameter written as `ctx`, the platform one as `platform`, and
# spaces as `_`), then compares it with ci/expectations/pyopencl.txt through ci/conformance.py and
# exits with its status. Work folder: target/pyopencl/ (venv, sdist, test/, junit xml, log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)

mode=ci
case "${1:-}" in
  --full) mode=full ;;
  "") ;;
  *) echo "usage: ci/pyopencl.sh [--full]" >&2; exit 2 ;;
esac

# Pinned versions (checked together on Debian 12, Python 3.11), one per line in ci/pyopencl.pins
# (ci/h200-prepare.sh downloads the same pins for the H200 machine's Python).
PYOPENCL_VERSION=2026.1.4
mapfile -t pins < <(grep -v '^#' ci/pyopencl.pins | sed 's/ *#.*//' | grep .)
SDIST_SHA256=6cb9544a004609061e86873fe36500da6c2101042e9c7b9c3b804a29a12b98bf

FULL_FILES=(test_wrapper.py test_enqueue_copy.py test_arrays_in_structs.py test_clrandom.py
            test_clmath.py test_algorithm.py test_array.py)
# CI runs every file: measured with all 7 files on this 2-core machine (vkcl snapshot, lavapipe,
# -n 2): 712 s wall, of which ~300 s is two test_algorithm.py sort tests hitting the 300 s
# timeout in parallel (clspv compiling the radix-sort scan kernels); summed test time per file:
# test_algorithm 97 s, test_array 66 s, test_clrandom 8 s, test_clmath 7 s, test_wrapper 5 s,
# the other two < 1 s. The per-test timeout is 300 s (PYOPENCL_TIMEOUT): test_clmath's
# test_bessel takes 80-100 s with Mesa's shader cache cold (lavapipe compiling its double
# kernels; 19 s warm) and reached 150 s beside another test on a loaded machine; no test is
# expected to time out since the radix-sort builds finish (compiler::wrapped_copy).
# That fits the ~20 min budget, so --full is the same set today; if the
# suite outgrows the budget, move files out of CI_FILES (test_array.py and test_algorithm.py
# take the most) and run them with --full.
CI_FILES=("${FULL_FILES[@]}")
if [ "$mode" = full ]; then files=("${FULL_FILES[@]}"); else files=("${CI_FILES[@]}"); fi

work="$root/target/pyopencl"
mkdir -p "$work" "$root/target/conformance"
if [ -n "${PYOPENCL_WHEELS:-}" ]; then
  # Offline (the H200 machine has no package index): PYOPENCL_WHEELS is a folder of wheels for
  # this machine's Python, pip's own wheel and pyopencl's sdist (ci/h200-prepare.sh pyopencl
  # makes it). pip runs from its wheel and installs into target/pyopencl/site: no venv needed.
  rm -rf "$work/site"
  python3 "$(ls "$PYOPENCL_WHEELS"/pip-*.whl)/pip" install --quiet --disable-pip-version-check \
    --no-index --target "$work/site" "$PYOPENCL_WHEELS"/*.whl
  export PYTHONPATH="$work/site"
  py=python3
  mkdir -p "$work/sdist" && cp "$PYOPENCL_WHEELS"/pyopencl-*.tar.gz "$work/sdist/"
else
  # python3-venv (Debian splits the venv module off python3).
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-venv
  fi
  venv="$work/venv"
  stamp="$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-16)"
  if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: "${pins[@]}"
    echo "$stamp" > "$venv/.pins"
  fi
  py="$venv/bin/python"
fi

# test/ from the sdist of the same version.
sdist="$work/sdist/pyopencl-$PYOPENCL_VERSION.tar.gz"
if [ ! -f "$sdist" ] || ! echo "$SDIST_SHA256  $sdist" | sha256sum -c --quiet - 2>/dev/null; then
  "$py" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary pyopencl \
    "pyopencl==$PYOPENCL_VERSION" -d "$work/sdist"
  echo "$SDIST_SHA256  $sdist" | sha256sum -c --quiet -
fi
if [ "$(cat "$work/test/.version" 2>/dev/null)" != "$PYOPENCL_VERSION" ]; then
  rm -rf "$work/test" "$work/pyopencl-$PYOPENCL_VERSION"
  tar -xzf "$sdist" -C "$work" "pyopencl-$PYOPENCL_VERSION/test"
  mv "$work/pyopencl-$PYOPENCL_VERSION/test" "$work/test"
  rmdir "$work/pyopencl-$PYOPENCL_VERSION"
  echo "$PYOPENCL_VERSION" > "$work/test/.version"
fi

source ci/env.sh
if [ -n "${VKCL_ICD:-}" ]; then export OCL_ICD_VENDORS="$VKCL_ICD"; fi
# pyopencl's wheel carries its own ocl-icd loader, which honours OCL_ICD_VENDORS (the path of one
# ICD library), so vkcl is platform 0 and the only one.
export PYOPENCL_TEST=0
# Relative on purpose (see platformdirs above): pyopencl's caches go under target/pyopencl/,
# emptied on every run so each run compiles from cold, as CI does.
export XDG_CACHE_HOME=xdg-cache
unset PYOPENCL_NO_CACHE || true
cd "$work"
rm -rf xdg-cache tmpdir_pyopencl_xdg_test
echo "pyopencl: ICD $OCL_ICD_VENDORS, mode $mode: ${files[*]}"

# A pytest plugin of this script's own (written here, loaded with -p):
# - pyopencl keeps a binary cache of built programs (under XDG_CACHE_HOME) except on devices
#   that cache builds themselves (pyopencl.characterize.has_src_build_cache: pocl, NVIDIA). A
#   test that builds a source some earlier test of the run built too loads the cached binary
#   (clCreateProgramWithBinary) instead: which tests do depends on how xdist spread the tests, so
#   with the cache on, results vary from run to run. The plugin reports vkcl as caching builds
#   itself (as pocl is), so every build compiles from source; the binary path stays covered by
#   test_wrapper.py::test_can_build_and_run_binary and test_array.py::test_xdg_cache_home.
#   VKCL_PYOPENCL_BINARY_CACHE=1 leaves pyopencl's cache on (what pyopencl users get).
# - the timeout: pytest-timeout's signal method cannot interrupt a test blocked inside a CL call
#   (a clspv compile that never ends hangs the run), so on expiry the plugin notes the test in
#   timeouts.txt and ends the worker process; xdist reports a crash, which the conversion below
#   turns back into `timeout`.
cat > vkcl_ci_plugin.py <<'PLUGIN'
import faulthandler, os, sys, threading
import pytest

if os.environ.get("VKCL_PYOPENCL_BINARY_CACHE") != "1":
    import pyopencl.characterize as _ch
    _orig_has_src_build_cache = _ch.has_src_build_cache
    def _has_src_build_cache(dev):
        if dev.platform.name == "vkcl":
            return True
        return _orig_has_src_build_cache(dev)
    _ch.has_src_build_cache = _has_src_build_cache

@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    if not settings.timeout or settings.timeout <= 0:
        return None
    def expire():
        with open("timeouts.txt", "a") as f:
            f.write(item.nodeid + "\n")
        sys.stderr.write(f"\n+++ timeout ({settings.timeout} s): {item.nodeid}\n")
        faulthandler.dump_traceback(file=sys.stderr)
        # vkcl's compiler helper (a child process) would outlive the worker, still compiling.
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid()):
                    os.kill(int(pid), 9)
            except (OSError, IndexError):
                pass
        os._exit(1)
    t = threading.Timer(settings.timeout, expire)
    t.daemon = True
    t.start()
    item._vkcl_timer = t
    return True

@pytest.hookimpl(tryfirst=True)
def pytest_timeout_cancel_timer(item):
    t = getattr(item, "_vkcl_timer", None)
    if t is not None:
        t.cancel()
        return True
    return None
PLUGIN
export PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}"
rm -f timeouts.txt

paths=("${files[@]/#/test/}")
"$py" -m pytest --collect-only -q -p no:cacheprovider "${paths[@]}" > collected.txt 2>&1 || true
rm -f junit.xml
set +e
"$py" -m pytest -p no:cacheprovider -p vkcl_ci_plugin -n "${PYOPENCL_WORKERS:-2}" --timeout="${PYOPENCL_TIMEOUT:-300}" -rfEs --junitxml=junit.xml "${paths[@]}" \
  > pytest.log 2>&1
rc=$?
set -e
# pytest's own summary line ("N failed, M passed") stays in the log: the expectations check
# below is the verdict, and CI reads summary lines.
grep -E "^(FAILED|ERROR) " pytest.log | cut -c1-200 | head -n 20 || true
echo "pyopencl: pytest exit status $rc (log: target/pyopencl/pytest.log)"

"$py" - collected.txt junit.xml timeouts.txt "$root/target/conformance/pyopencl.results" <<'PY'
import re, sys, os, xml.etree.ElementTree as ET
collected_path, junit_path, timeouts_path, out_path = sys.argv[1:5]

def norm(nodeid):
    nodeid = re.sub(r"<context factory for <pyopencl\.Device '[^']*' on '[^']*'>>", "ctx", nodeid)
    nodeid = re.sub(r"<pyopencl\.Platform '[^']*'( at 0x[0-9a-f]+)?>", "platform", nodeid)
    return re.sub(r"\s", "_", nodeid)

collected = [norm(l.strip()) for l in open(collected_path) if "::" in l and l.startswith("test/")]
timed_out = set()
if os.path.exists(timeouts_path):
    timed_out = {norm(l.strip()) for l in open(timeouts_path) if l.strip()}
status = {}
if os.path.exists(junit_path):
    for tc in ET.parse(junit_path).getroot().iter("testcase"):
        cls, name = tc.get("classname", ""), tc.get("name", "")
        parts = cls.split(".")
        # classname "test.test_array" (module) or "test.test_array.TestClass".
        nodeid = "/".join(parts[:2]) + ".py::" + "::".join(parts[2:] + [name])
        nodeid = norm(nodeid)
        children = {c.tag: c for c in tc}
        msg = " ".join((c.get("message") or "") + " " + (c.text or "") for c in tc
                       if c.tag in ("failure", "error"))
        if "failure" in children or "error" in children:
            if nodeid in timed_out or "Timeout (>" in msg:
                s = "timeout"
            elif re.search(r"worker '?gw\d+'? crashed|node down|Fatal Python error", msg):
                s = "crash"
            else:
                s = "fail"
        elif "skipped" in children:
            s = "skip"
        else:
            s = "pass"
        # A test with a failing teardown appears twice: keep the worse outcome.
        if status.get(nodeid, "pass") == "pass" or s in ("fail", "crash", "timeout"):
            status[nodeid] = s
for t in collected:
    status.setdefault(t, "notrun")
with open(out_path, "w") as f:
    for t in sorted(status):
        f.write(f"{status[t]} {t}\n")
PY

cd "$root"
set +e
python3 ci/conformance.py check pyopencl target/conformance/pyopencl.results
check=$?
set -e
echo "ci/pyopencl.sh ($mode): $(( $(date +%s) - start )) s"
exit $check
