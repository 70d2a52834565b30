#!/usr/bin/env bash
# CLBlast's correctness tests (Debian 12 package clblast-tests 1.5.3, binaries
# clblast_test_<routine>) against vkcl on lavapipe, compared with ci/expectations/clblast.txt by
# ci/conformance.py.
#
#   ci/clblast.sh             CI mode: the routines in CI_ROUTINES below
#   ci/clblast.sh --full      all 22 routines of issue 15 (FULL_ROUTINES)
#   ci/clblast.sh xgemm ...   the routines named (`api`: only the API check below)
# Each mode compares its results with the expectations of the routines it ran.
#
# CI and --full modes also run ci/clblast_api.c (built here against Debian's libclblast-dev):
# SGEMM, DGEMM, CGEMM and HGEMM through CLBlast's C API at m = n = k = N, and iHAMAX over N,
# checked against a CPU reference, one result line `<status> api/<ROUTINE>/n=<N>` each, for
# N = 7, 64, 128, 256, 1024 (measured on a loaded machine: about 50 s when vkcl builds the
# kernels, 1 s for N <= 256 from its cache; N = 1024 about 30 s, mostly the CPU reference).
#   VKCL_ICD=/path/libvkcl.so ci/clblast.sh     tests another build of the ICD
#   CLBLAST_TIMEOUT=N         per-routine timeout in seconds (default 1800; xtrmm took 599 s
#                             with empty caches on a loaded machine)
#
# Each binary runs with `-platform 0 -device 0` and its defaults (-full_test off: CLBlast's
# built-in reduced set of sizes and layouts; the binaries have no other option that shrinks a
# run). Every binary tests each precision the device reports: S, D, C, Z and H on vkcl
# (cl_khr_fp64 and cl_khr_fp16); a precision the device lacks shows as `o`, a skip.
#
# CLBlast prints, per precision ("SGEMM", "iHAMAX", ...) and per block of cases ("regular
# behaviour" or "invalid buffer sizes", for one combination of layout/transpose/... options),
# one progress character per case. Each case becomes one result line of
# target/conformance/clblast.results:
#   <status> <routine>/<PRECISION-ROUTINE>/<behaviour>/<options>/<n>
# with n the case's position in its block (1-based; the order is fixed by the binary), spaces
# and parentheses of CLBlast's names folded to `_` (a precision the binary tests a second time,
# as xgemm does with its direct kernels forced, is `SGEMM~2`), and statuses
#   `:` correct results, `.` correct error code            -> pass
#   `X` incorrect results, `/` incorrect error code         -> fail
#   `\` OpenCL kernel compilation error                     -> fail (CLBlast counts it skipped;
#                                                              here a build failure is vkcl's)
#   `o` unsupported precision                              -> skip
#   `-` not checked: CLBlast's reference (CBLAS) has no error codes to compare with; no result
#       line (they are most of CLBlast's "skipped"; the summary counts them as unchecked)
# A binary that dies (signal) or times out adds `crash|timeout <routine>/process`; the cases it
# never reached have no line (an expected one then shows as "listed but not run").
# target/conformance/clblast.summary gets the pass/fail/skip counts per routine and precision.
# Exits with ci/conformance.py's status.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

FULL_ROUTINES=(xaxpy xdot xnrm2 xasum xamax xscal xcopy xswap xgemv xger xsymv xtrmv xtrsv
               xgemm xsymm xsyrk xtrmm xtrsm xomatcopy xim2col xgemmbatched xgemmstridedbatched)
# CI: every routine but the four slowest (measured on a loaded 2-core machine, vkcl on
# lavapipe, warm caches: xsymm 341 s when every build crashed, xtrmm 256 s, xgemmbatched 251 s,
# xgemmstridedbatched ~250 s; the other 18 together about 480 s. With empty caches, since SYMM
# builds: xsymm 175 s, xtrmm 599 s, xgemm 559 s). xgemm covers the GEMM kernels those four use;
# --full runs them.
CI_ROUTINES=(xaxpy xdot xnrm2 xasum xamax xscal xcopy xswap xgemv xger xsymv xtrmv xtrsv
             xgemm xsyrk xtrsm xomatcopy xim2col)

mode=ci
api_sizes=(7 64 128 256 1024)
case "${1:-}" in
  --full) mode=full; routines=("${FULL_ROUTINES[@]}") ;;
  "") routines=("${CI_ROUTINES[@]}") ;;
  -*) echo "usage: ci/clblast.sh [--full | ROUTINE... | api]" >&2; exit 2 ;;
  *) mode=some; routines=(); api_sizes=()
     for r in "$@"; do
       if [ "$r" = api ]; then api_sizes=(7 64 128 256 1024); else routines+=("$r"); fi
     done ;;
esac

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
packages=(clblast-tests libclblast-dev)
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "clblast.sh: installing ${packages[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${packages[@]}"
    break
  fi
done

source ci/env.sh
export OCL_ICD_VENDORS="${VKCL_ICD:-$OCL_ICD_VENDORS}"
if [ ! -f "$OCL_ICD_VENDORS" ]; then
  echo "clblast.sh: no ICD at $OCL_ICD_VENDORS (run cargo build, or set VKCL_ICD)" >&2
  exit 2
fi
echo "clblast.sh: ICD $OCL_ICD_VENDORS, Vulkan driver $VK_DRIVER_FILES, mode $mode"

conf=target/conformance
logs=$conf/clblast-logs
mkdir -p "$conf" "$logs"
rm -f "$logs"/*.log "$logs"/*.rc
for r in "${routines[@]}"; do
  t0=$(date +%s)
  rc=0
  timeout "${CLBLAST_TIMEOUT:-1800}" "clblast_test_$r" -platform 0 -device 0 > "$logs/$r.log" 2>&1 || rc=$?
  echo "$rc" > "$logs/$r.rc"
  echo "clblast.sh: $r exited with $rc after $(( $(date +%s) - t0 )) s"
done

python3 - "$logs" "$conf/clblast.results" "$conf/clblast.summary" "${routines[@]}" <<'PY'
import collections, re, sys
logs, dest, summary, routines = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STATUS = {":": "pass", ".": "pass", "X": "fail", "/": "fail", "\\": "fail", "o": "skip",
          "-": "unchecked"}
PROGRESS = re.compile(r"^([:.X/\\o-]+)(CLBlast: .*)?$")
def fold(s):
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", s).strip("_")
results, counts, problems = {}, collections.OrderedDict(), []
for r in routines:
    text = ANSI.sub("", open(f"{logs}/{r}.log", errors="replace").read())
    rc = int(open(f"{logs}/{r}.rc").read())
    prec = block = None
    seen, runs = collections.Counter(), collections.Counter()
    cases = []
    for line in text.splitlines():
        m = re.match(r"^\* Starting tests for the '(\S+)' routine", line)
        if m:
            # A binary may test a precision twice: xgemm runs each with CLBlast's indirect
            # (large-matrix) kernels forced, then again (`SGEMM~2`) with the direct ones.
            runs[m.group(1)] += 1
            n = runs[m.group(1)]
            prec, block = m.group(1) + (f"~{n}" if n > 1 else ""), None
            seen.clear()
            counts.setdefault((r, prec), collections.Counter())
            continue
        m = re.match(r"^\* Testing '(.+)' for '(.*)':", line)
        if m and prec:
            label = f"{fold(m.group(1))}/{fold(m.group(2)) or 'default'}"
            seen[label] += 1
            block = label if seen[label] == 1 else f"{label}~{seen[label]}"
            cases = []
            continue
        s = line.strip()
        # A case's character may be followed on its line by an error message CLBlast prints
        # ("/CLBlast: OpenCL error: clBuildProgram: -11").
        m = PROGRESS.match(s)
        if block and m:
            for ch in m.group(1):
                cases.append(ch)
                counts[(r, prec)][STATUS[ch]] += 1
                if STATUS[ch] != "unchecked":
                    results[f"{r}/{prec}/{block}/{len(cases)}"] = STATUS[ch]
            continue
        m = re.match(r"^Pass rate.*: (\d+) passed / (\d+) skipped / (\d+) failed", s)
        if m and block:
            p, k, f = map(int, m.groups())
            mine = (sum(c in ":." for c in cases), sum(c in "o-\\" for c in cases),
                    sum(c in "X/" for c in cases))
            if (p, k, f) != mine:
                problems.append(f"{r}/{prec}/{block}: CLBlast counts {p}/{k}/{f} "
                                f"(passed/skipped/failed), progress characters {mine}")
            block = None
    if rc >= 124:
        results[f"{r}/process"] = "timeout" if rc == 124 else "crash"
        print(f"clblast.sh: {r}: the binary {'timed out' if rc == 124 else f'died ({rc})'}")
with open(dest, "w") as f:
    for tid in sorted(results):
        f.write(f"{results[tid]} {tid}\n")
rows = ["routine precision passed failed skipped unchecked"]
total = collections.Counter()
for (r, prec), c in counts.items():
    rows.append(f"{r} {prec} {c['pass']} {c['fail']} {c['skip']} {c['unchecked']}")
    total.update(c)
rows.append(f"all - {total['pass']} {total['fail']} {total['skip']} {total['unchecked']}")
open(summary, "w").write("\n".join(rows) + "\n")
width = max(len(x.split()[0]) for x in rows)
for row in rows:
    a = row.split()
    print(f"  {a[0]:<{width}} {a[1]:<10} {a[2]:>7} {a[3]:>7} {a[4]:>7} {a[5]:>9}")
for p in problems:
    print("clblast.sh: " + p)
sys.exit(1 if problems else 0)
PY

prefixes=("${routines[@]/%//}")
if [ ${#api_sizes[@]} -gt 0 ]; then
  t0=$(date +%s)
  cc -O2 -Wall -o "$conf/clblast_api" ci/clblast_api.c -lclblast -lOpenCL -lm
  rm -f "$conf/clblast-api.results"
  rc=0
  timeout "${CLBLAST_TIMEOUT:-1800}" "$conf/clblast_api" "$conf/clblast-api.results" \
    "${api_sizes[@]}" > "$logs/api.log" 2>&1 || rc=$?
  cat "$logs/api.log"
  [ $rc -lt 124 ] || echo "crash api/process" >> "$conf/clblast-api.results"
  cat "$conf/clblast-api.results" >> "$conf/clblast.results" 2>/dev/null || true
  prefixes+=(api/)
  echo "clblast.sh: api exited with $rc after $(( $(date +%s) - t0 )) s"
fi

# Only the expectations of the routines run apply.
check=0
python3 ci/conformance.py check clblast "$conf/clblast.results" "${prefixes[@]}" || check=$?
echo "clblast.sh: wall time $(( $(date +%s) - start )) s"
exit $check
