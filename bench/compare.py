#!/usr/bin/env python3
"""Runs vkcl-bench on several OpenCL implementations in one invocation and puts the results side
by side (docs/BENCHMARKS.md).

  compare.py run --out DIR --impl LABEL=ICD[:PLATFORM] ... [--raw-vulkan EXE]
                 [--bench EXE] [--quick] [--reps N] [--only GROUPS]
  compare.py table DIR        (re-)writes DIR/results.md from DIR/results.json
  compare.py plot DIR         DIR/transfer.png and DIR/ratios.png (needs matplotlib: bench/plot.sh)

`run` runs the benchmark executable once per implementation, one after the other, each with
OCL_ICD_VENDORS=ICD (an ICD library or .icd file) and --platform PLATFORM, writing
DIR/LABEL.json; then DIR/results.json (all of them) and DIR/results.md (the table). The first
implementation is "vkcl": every ratio is first / other, as performance (for times, the other's
time over vkcl's), so above 1 means vkcl is ahead. With --raw-vulkan, the raw-Vulkan baseline
(examples/raw_vulkan.rs) runs the SPIR-V of two kernels that vkcl-bench writes from the first
implementation, and the table gains vkcl's overhead over it. Python's standard library only,
except for `plot`. Exits non-zero if any run fails (a wrong result fails the run).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_all(args):
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for spec in args.impl:
        label, _, rest = spec.partition("=")
        icd, _, platform = rest.partition(":")
        if not label or not icd:
            sys.exit(f"compare.py: --impl {spec!r}: expected LABEL=ICD[:PLATFORM]")
        runs.append((label, os.path.abspath(icd), platform))
    common = (["--quick"] if args.quick else []) + (["--reps", str(args.reps)] if args.reps else [])
    common += ["--only", args.only] if args.only else []
    results = []
    for label, icd, platform in runs:
        out = os.path.join(args.out, f"{label}.json")
        cmd = [args.bench, "--label", label, "--json", out] + common
        cmd += ["--platform", platform] if platform else []
        print(f"== {label}: OCL_ICD_VENDORS={icd} {' '.join(cmd)}", flush=True)
        subprocess.run(cmd, env=dict(os.environ, OCL_ICD_VENDORS=icd), check=True)
        results.append(json.load(open(out)))
        if args.raw_vulkan and len(results) == 1:
            results.append(run_raw_vulkan(args, runs[0], common))
    merged = os.path.join(args.out, "results.json")
    json.dump({"runs": results}, open(merged, "w"), indent=1)
    write_table(args.out)


def run_raw_vulkan(args, first, common):
    """The raw-Vulkan baseline, run right after the first implementation (so that both see the
    same machine load): vkcl-bench writes that implementation's binaries, raw_vulkan runs them."""
    label, icd, platform = first
    kdir = tempfile.mkdtemp(prefix="vkcl-bench-raw-")
    cmd = [args.bench, "--write-overhead-kernels", kdir] + common
    cmd += ["--platform", platform] if platform else []
    print(f"== raw Vulkan: the SPIR-V of {label}'s kernels", flush=True)
    subprocess.run(cmd, env=dict(os.environ, OCL_ICD_VENDORS=icd), check=True)
    out = os.path.join(args.out, "raw-vulkan.json")
    subprocess.run([args.raw_vulkan, kdir, "--json", out], check=True)
    shutil.rmtree(kdir)
    raw = json.load(open(out))
    raw["raw_vulkan"] = True
    return raw


def fmt(v):
    if v is None:
        return ""
    a = abs(v)
    if a >= 1e4:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cell(r):
    if r is None:
        return "–"
    if r.get("status") != "ok":
        return r.get("status", "?")
    return f"{fmt(r['median'])} ({fmt(r['min'])}–{fmt(r['max'])})"


def ratio(a, b):
    """a / b as performance: higher-is-better figures a/b, times b/a."""
    if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
        return None
    if not a["median"] or not b["median"]:
        return None
    return a["median"] / b["median"] if a["higher_is_better"] else b["median"] / a["median"]


def key(r):
    return (r["group"], r["name"])


def by_key(run):
    return {key(r): r for r in run["results"]}


# Issue 8's targets: (group, name or None for "the largest size"), minimum ratio vkcl/other.
RATIO_TARGETS = [
    ("memory", "triad", 0.95),
    ("compute", "sgemm naive", 0.9),
    ("compute", "sgemm tiled", 0.9),
    ("transfer", "write", 0.9),
    ("transfer", "read", 0.9),
    ("transfer", "map read", 0.9),
    ("transfer", "map write", 0.9),
    ("launch", "empty kernels per second", 0.5),
]
ABSOLUTE_TARGETS = [  # (group, name, at most, unit): vkcl's own figure
    ("build", "build warm disk (new process)", 10.0, "ms"),
    ("build", "first enqueue, warm disk", 5.0, "ms"),
]


def find(results, group, prefix):
    """The result of `group` whose name starts with `prefix`; for transfers, the largest size."""
    hits = [r for r in results.values() if r["group"] == group and r["name"].startswith(prefix + " ")
            or r["group"] == group and r["name"] == prefix]
    if group == "transfer":
        hits = [r for r in hits if r.get("status") == "ok"]
        return max(hits, key=lambda r: r["size"]) if hits else None
    return hits[0] if hits else None


def write_table(out_dir):
    runs = json.load(open(os.path.join(out_dir, "results.json")))["runs"]
    impls = [r for r in runs if not r.get("raw_vulkan")]
    raw = next((r for r in runs if r.get("raw_vulkan")), None)
    first, others = impls[0], impls[1:]
    maps = [by_key(r) for r in impls]
    lines = []
    lines.append("| implementation | platform | device | driver |")
    lines.append("| --- | --- | --- | --- |")
    for r in impls:
        lines.append(f"| {r['label']} | {r['platform']} | {r['device']} | {r.get('driver_version', '')} |")
    quick = any(r.get("quick") for r in impls)
    lines.append("")
    lines.append(f"Median of {first['reps']} repetitions after a warm-up (min–max in brackets)"
                 + (", --quick settings" if quick else "") + f". Ratios: {first['label']} / other as"
                 " performance (for times: the other's time over "
                 f"{first['label']}'s), so above 1 means {first['label']} is ahead.")
    lines.append("")
    head = "| group | figure | unit | " + " | ".join(r["label"] for r in impls)
    head += "".join(f" | {first['label']} / {o['label']}" for o in others) + " |"
    lines.append(head)
    lines.append("|" + " --- |" * (3 + len(impls) + len(others)))
    for k, r0 in maps[0].items():
        row = [k[0], k[1], r0["unit"]] + [cell(m.get(k)) for m in maps]
        for m in maps[1:]:
            q = ratio(r0, m.get(k))
            row.append(f"{q:.2f}" if q is not None else "")
        lines.append("| " + " | ".join(row) + " |")
    if others:
        lines.append("")
        lines.append(f"Targets (issue 8), {first['label']} against {others[0]['label']}:")
        lines.append("")
        lines.append("| target | measured | met |")
        lines.append("| --- | --- | --- |")
        for group, name, want in RATIO_TARGETS:
            a = find(maps[0], group, name)
            b = maps[1].get(key(a)) if a else None  # transfers: the same size
            q = ratio(a, b)
            what = f"{group} {a['name'] if a else name}"
            lines.append(f"| {what} ≥ {want} | {q:.2f} |" + (" yes |" if q >= want else " no |")
                         if q is not None else f"| {what} ≥ {want} | – | – |")
        for group, name, most, unit in ABSOLUTE_TARGETS:
            a = find(maps[0], group, name)
            ok = a and a.get("status") == "ok"
            lines.append(f"| {first['label']} {name} < {most:g} {unit} | "
                         + (f"{fmt(a['median'])} {unit} | {'yes' if a['median'] < most else 'no'} |"
                            if ok else "– | – |"))
    if raw:
        rm = by_key(raw)
        lines.append("")
        lines.append(f"{first['label']} against the same SPIR-V dispatched through raw Vulkan "
                     f"(examples/raw_vulkan.rs), device {raw['device']}:")
        lines.append("")
        lines.append(f"| figure | unit | {first['label']} | raw Vulkan | {first['label']} / raw | overhead |")
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for k, r in rm.items():
            a = maps[0].get(k)
            q = ratio(a, r)
            over = f"{(1 / q - 1) * 100:+.1f} %" if q else ""
            lines.append(f"| {k[0]} {k[1]} | {r['unit']} | {cell(a)} | {cell(r)} | "
                         + (f"{q:.3f}" if q else "") + f" | {over} |")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out_dir, "results.md"), "w").write(text)
    print(text)


def size_label(x, _pos=None):
    return f"{x / 2**20:g} MiB" if x >= 2**20 else f"{x / 2**10:g} KiB"


def plot(out_dir):
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = json.load(open(os.path.join(out_dir, "results.json")))["runs"]
    impls = [r for r in runs if not r.get("raw_vulkan")]
    # Transfer bandwidth against size, one panel per kind of transfer.
    kinds = ["write", "read", "map read", "map write"]
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2), sharey=True)
    for ax, kind in zip(axes, kinds):
        for run in impls:
            pts = sorted((r["size"], r["median"], r["min"], r["max"]) for r in run["results"]
                         if r["group"] == "transfer" and r.get("status") == "ok"
                         and r["name"].rsplit(" ", 2)[0] == kind)
            if pts:
                x = [p[0] for p in pts]
                ax.plot(x, [p[1] for p in pts], marker="o", ms=3, label=run["label"])
                ax.fill_between(x, [p[2] for p in pts], [p[3] for p in pts], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=16))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(size_label))
        ax.set_yscale("log")
        ax.set_title(kind)
        ax.set_xlabel("transfer size")
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("GB/s")
    axes[0].legend(fontsize=8)
    fig.suptitle("host↔device transfers (median, min–max shaded)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "transfer.png"), dpi=72)
    plt.close(fig)
    # Ratios of everything but the transfer sweep (its largest size stands for it).
    if len(impls) < 2:
        return
    first = by_key(impls[0])
    for other in impls[1:]:
        om = by_key(other)
        names, values = [], []
        for k, r in first.items():
            if k[0] == "transfer":
                largest = find(first, "transfer", r["name"].rsplit(" ", 2)[0])
                if largest is not r:
                    continue
            q = ratio(r, om.get(k))
            if q is not None:
                names.append(f"{k[0]}: {k[1]}")
                values.append(q)
        fig, ax = plt.subplots(figsize=(8, 0.24 * len(names) + 1.2))
        colours = ["tab:green" if v >= 1 else "tab:red" for v in values]
        ax.barh(range(len(names)), values, color=colours)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xlabel(f"{impls[0]['label']} / {other['label']} (performance; > 1: {impls[0]['label']} ahead)")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        fig.tight_layout()
        suffix = "" if len(impls) == 2 else "-" + other["label"]
        fig.savefig(os.path.join(out_dir, f"ratios{suffix}.png"), dpi=72)
        plt.close(fig)
    print(f"compare.py: plots in {out_dir}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--impl", action="append", required=True, help="LABEL=ICD[:PLATFORM]")
    r.add_argument("--bench", default=os.path.join(ROOT, "target/bench/vkcl-bench"))
    r.add_argument("--raw-vulkan", help="the raw_vulkan executable")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--reps", type=int)
    r.add_argument("--only")
    sub.add_parser("table").add_argument("dir")
    sub.add_parser("plot").add_argument("dir")
    args = p.parse_args()
    if args.cmd == "run":
        run_all(args)
    elif args.cmd == "table":
        write_table(args.dir)
    else:
        plot(args.dir)


if __name__ == "__main__":
    main()
