#!/usr/bin/env bash
# piglit's OpenCL tests (Debian package `piglit`) against vkcl on lavapipe, compared with
# ci/expectations/piglit.txt by ci/conformance.py.
#
#   ci/piglit.sh            uses target/debug/libvkcl.so (run `cargo build` first)
#   VKCL_ICD=/path/libvkcl.so ci/piglit.sh     tests another build of the ICD
#   PIGLIT_TIMEOUT=N        per-test timeout in seconds (default 180: the slowest test,
#                           builtin-float-tgamma-1.0, is lavapipe compiling libclc's tgamma
#                           for float..float16 at first dispatch: 63 s on this 2-core machine
#                           with Mesa's shader cache cold, 1.3 s warm; it timed out at 60 s in
#                           the sixteenth session's clean-clone run)
#   PIGLIT_JOBS=N           parallel tests (default 2)
#
# Installs piglit when missing (about 2 GB; apt-get, through sudo when not root), runs
# `piglit run cl` (all 710 tests; about 11 minutes on 2 cores), and writes
# target/conformance/piglit.results: one `<status> <test id>` line per test, where
# - the test id is piglit's name with each space replaced by `_` (the expectations file needs
#   ids without spaces; the script checks that no two names collide);
# - statuses: pass, fail, skip, crash, timeout as piglit reports them; piglit's `warn` (the
#   test ran but reported a problem) and `dmesg-warn`/`dmesg-fail` (only with --dmesg, which
#   is not used) count as fail; `incomplete` (the test started but never finished, e.g. the
#   runner died) counts as crash; a test of the profile with no result at all is notrun.
# Exits with ci/conformance.py's status: 0 when every result matches the expectations.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
if ! command -v piglit >/dev/null ||
   ! dpkg-query -W -f='${Status}' piglit 2>/dev/null | grep -q "install ok installed"; then
  echo "piglit.sh: installing piglit (about 2 GB)"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q piglit
fi

source ci/env.sh
export OCL_ICD_VENDORS="${VKCL_ICD:-$OCL_ICD_VENDORS}"
if [ ! -f "$OCL_ICD_VENDORS" ]; then
  echo "piglit.sh: no ICD at $OCL_ICD_VENDORS (run cargo build, or set VKCL_ICD)" >&2
  exit 2
fi
echo "piglit.sh: ICD $OCL_ICD_VENDORS, Vulkan driver $VK_DRIVER_FILES"

conf=target/conformance
out=$conf/piglit-out
mkdir -p "$conf"
# The full list of the profile's tests, so that a test that never reports is `notrun`.
piglit print-cmd --format '{name}' cl > "$conf/piglit.tests"

rc=0
run_start=$(date +%s)
piglit run cl -j "${PIGLIT_JOBS:-2}" --timeout "${PIGLIT_TIMEOUT:-180}" -l dummy -o "$out" || rc=$?
run_end=$(date +%s)
echo "piglit.sh: piglit run exited with $rc after $(( run_end - run_start )) s"

python3 - "$out" "$conf/piglit.tests" "$conf/piglit.results" <<'PY'
import bz2, collections, glob, json, os, sys
out, listing, dest = sys.argv[1:4]
MAP = {"pass": "pass", "fail": "fail", "skip": "skip", "crash": "crash", "timeout": "timeout",
       "notrun": "notrun", "warn": "fail", "dmesg-warn": "fail", "dmesg-fail": "fail",
       "incomplete": "crash"}
tests = {}
final = [p for p in (os.path.join(out, "results.json.bz2"), os.path.join(out, "results.json"))
         if os.path.exists(p)]
if final:
    opener = bz2.open if final[0].endswith(".bz2") else open
    with opener(final[0], "rt") as f:
        for name, r in json.load(f)["tests"].items():
            tests[name] = r["result"]
else:  # the run did not finish: piglit's per-test files
    for p in glob.glob(os.path.join(out, "tests", "*.json")):
        try:
            for name, r in json.load(open(p)).items():
                tests[name] = r["result"]
        except ValueError:
            pass
for name in open(listing).read().splitlines():
    if name.strip():
        tests.setdefault(name, "notrun")
ids = {}
for name, status in tests.items():
    tid = name.replace(" ", "_")
    assert tid not in ids, f"two piglit tests map to {tid}"
    ids[tid] = MAP.get(status, "fail")
with open(dest, "w") as f:
    for tid in sorted(ids):
        f.write(f"{ids[tid]} {tid}\n")
print("piglit.sh: piglit statuses: " +
      ", ".join(f"{n} {s}" for s, n in sorted(collections.Counter(tests.values()).items())))
PY

check=0
python3 ci/conformance.py check piglit "$conf/piglit.results" || check=$?
echo "piglit.sh: wall time $(( $(date +%s) - start )) s (piglit run $(( run_end - run_start )) s)"
exit $check
