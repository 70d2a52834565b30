#!/usr/bin/env python3
"""Compare a client suite's results with its expectations file, and print the pass table.

  ci/conformance.py check SUITE RESULTS   compare; exit 1 on a regression or an unexpected pass
  ci/conformance.py table [RESULTS_DIR]   print the markdown table of every suite's results
  ci/conformance.py doc-check TABLE DOC   exit 1 unless DOC contains TABLE verbatim

RESULTS (written by the suite's runner, e.g. ci/piglit.sh): one line per test,
  <status> <test id>
with status one of pass, fail, skip, crash, timeout, notrun.

ci/expectations/SUITE.txt: one line per test that is expected NOT to pass,
  <test id> <status> # <reason> (issue N)
Every test not listed must pass. A listed test must have the listed status (a listed test that
passes is an "unexpected pass": update the file). Every line needs a reason. A `{A..B}` in a
test id stands for each of the ids with A, A+1, ..., B there (CLBlast's numbered cases).

  ci/conformance.py check SUITE RESULTS PREFIX...   only the expectations of tests whose id
      starts with one of the prefixes apply (a run of part of a suite, e.g. some CLBlast
      routines); every result is still checked.
"""
import collections, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATUSES = ("pass", "fail", "skip", "crash", "timeout", "notrun")


def read_results(path):
    results = {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        status, test = line.split(None, 1)
        assert status in STATUSES, f"{path}: bad status {status!r}"
        results[test] = status
    return results


def read_expectations(suite):
    path = os.path.join(ROOT, "ci", "expectations", suite + ".txt")
    expected, problems = {}, []
    if not os.path.exists(path):
        return expected, problems
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\S+)\s+(\w+)\s+#\s*(\S.*)$", line)
        if not m or m.group(2) not in STATUSES:
            problems.append(f"{path}:{n}: expected '<test> <status> # <reason>': {line}")
            continue
        for test in expand(m.group(1)):
            expected[test] = m.group(2)
    return expected, problems


def expand(test):
    """The ids a `{A..B}` range in `test` stands for (itself when it has none)."""
    m = re.search(r"\{(\d+)\.\.(\d+)\}", test)
    if not m:
        return [test]
    head, tail = test[:m.start()], test[m.end():]
    return [t for n in range(int(m.group(1)), int(m.group(2)) + 1)
            for t in expand(f"{head}{n}{tail}")]


def check(suite, results_path, scope=()):
    results = read_results(results_path)
    expected, problems = read_expectations(suite)
    if scope:
        expected = {t: s for t, s in expected.items() if t.startswith(tuple(scope))}
    regressions, unexpected, changed = [], [], []
    for test, status in sorted(results.items()):
        want = expected.get(test, "pass")
        if status == want:
            continue
        if want == "pass":
            regressions.append(f"{test}: {status} (expected to pass)")
        elif status == "pass":
            unexpected.append(f"{test}: passes now (listed as {want}): remove it from ci/expectations/{suite}.txt")
        else:
            changed.append(f"{test}: {status} (listed as {want})")
    missing = [t for t in expected if t not in results]
    for title, rows in (("expectation file problems", problems), ("regressions", regressions),
                        ("unexpected passes", unexpected), ("status changed", changed),
                        ("listed but not run", missing)):
        if rows:
            print(f"{suite}: {title}:")
            for r in rows:
                print("  " + r)
    counts = collections.Counter(results.values())
    print(f"{suite}: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES))
    return 1 if problems or regressions or unexpected or changed or missing else 0


def table(results_dir):
    rows = ["| suite | passed | failed | skipped | not run | total |", "| --- | --- | --- | --- | --- | --- |"]
    for f in sorted(os.listdir(results_dir)):
        if not f.endswith(".results"):
            continue
        c = collections.Counter(read_results(os.path.join(results_dir, f)).values())
        failed = c["fail"] + c["crash"] + c["timeout"]
        total = sum(c.values())
        rows.append(f"| {f[:-8]} | {c['pass']} | {failed} | {c['skip']} | {c['notrun']} | {total} |")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4:]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "doc-check":
        table_text, doc = open(sys.argv[2]).read().strip(), open(sys.argv[3]).read()
        if table_text not in doc:
            print(f"{sys.argv[3]} does not hold the current table; replace it with:\n{table_text}")
            sys.exit(1)
        print(f"{sys.argv[3]} holds the current table")
    elif len(sys.argv) >= 2 and sys.argv[1] == "table":
        table(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target", "conformance"))
    else:
        sys.exit(__doc__)
