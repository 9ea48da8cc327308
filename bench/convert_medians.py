#!/usr/bin/env python3
"""Median ratios of pixelport-bench-convert over several runs (see bench/README.md).

Runs each given binary RUNS times (binaries alternate run by run, so all see the same
machine), reads every run's ratios (its JSON output: the tables' figures, unrounded) and prints, per conversion, the median
over the runs of each (variant, size) ratio to memcpy, and of the quotients given with
--versus (A/B: variant A's ratio over variant B's, taken within each run, then the median).

  bench/convert_medians.py --runs 5 --filter '(memcpy|simd-1t|libyuv-1t).*1920x1080' \\
      --versus simd-1t/libyuv-1t build-core/bench/pixelport-bench-convert
  # two builds in one run: LABEL=PATH; their columns are prefixed with LABEL:
  bench/convert_medians.py --versus new:simd-1t/base:simd-1t new=build/.../bench base=/tmp/bench
  # under emulation: --wrapper 'qemu-aarch64 -L /usr/aarch64-linux-gnu'
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

def parse_json(path):
    """{(variant, size): {conversion: ratio}} as the tables compute it (fastest paired memcpy
    over fastest conversion, over all repetitions), at full precision."""
    best = {}
    with open(path) as f:
        for b in json.load(f)["benchmarks"]:
            if b.get("run_type") != "iteration" or "min_conv" not in b or b.get("error_occurred"):
                continue
            variant, conv, size = b["run_name"].split("/")[0].split("|")
            conv_s, copy_s = best.get((variant, conv, size), (1e30, 1e30))
            best[(variant, conv, size)] = (min(conv_s, b["min_conv"]), min(copy_s, b["min_copy"]))
    out = {}
    for (variant, conv, size), (conv_s, copy_s) in best.items():
        out.setdefault((variant, size), {})[conv] = copy_s / conv_s
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="+", help="PATH or LABEL=PATH of pixelport-bench-convert")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--filter", default="", help="--benchmark_filter (keep memcpy in it)")
    ap.add_argument("--wrapper", default="", help="command line to run each binary under (qemu)")
    ap.add_argument("--versus", action="append", default=[], help="A/B: median of A's ratio over B's")
    ap.add_argument("--extra", default="", help="more arguments for the benchmark")
    ap.add_argument("--spread", action="store_true", help="--versus columns as median (min-max) over the runs")
    args = ap.parse_args()

    benches = [b.split("=", 1) if "=" in b else ["", b] for b in args.bench]
    runs = []  # per run: {(label:variant, size): {conv: ratio}}
    for r in range(args.runs):
        merged = {}
        for label, path in benches:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "run.json")
                cmd = shlex.split(args.wrapper) + [path, "--benchmark_out=" + out, "--benchmark_out_format=json"]
                if args.filter:
                    cmd.append("--benchmark_filter=" + args.filter)
                subprocess.run(cmd + shlex.split(args.extra), capture_output=True, text=True, check=True)
                tables = parse_json(out)
            for (variant, size), convs in tables.items():
                merged[((label + ":" if label else "") + variant, size)] = convs
        runs.append(merged)
        print(f"run {r + 1}/{args.runs} done", file=sys.stderr)

    columns = sorted({k for run in runs for k in run}, key=lambda k: (k[1], k[0]))
    convs = []
    for run in runs:
        for col in columns:
            for c in run.get(col, {}):
                if c not in convs:
                    convs.append(c)

    def values(fn):
        return [v for v in (fn(run) for run in runs) if v is not None]

    def median_of(fn):
        vals = values(fn)
        return statistics.median(vals) if vals else None

    header = ["conversion"] + [f"{v} {s}" for v, s in columns]
    rows = []
    for c in convs:
        row = [c]
        for col in columns:
            m = median_of(lambda run: run.get(col, {}).get(c))
            row.append("-" if m is None else f"{m:.3g}x")
        rows.append(row)
    for vs in args.versus:
        a, b = vs.split("/")
        sizes = sorted({s for v, s in columns})
        for s in sizes:
            header.append(f"{a}/{b} {s}")
            for row, c in zip(rows, convs):
                def q(run):
                    x, y = run.get((a, s), {}).get(c), run.get((b, s), {}).get(c)
                    return x / y if x and y else None
                vals = values(q)
                if not vals:
                    row.append("-")
                elif args.spread:
                    row.append(f"{statistics.median(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})")
                else:
                    row.append(f"{statistics.median(vals):.2f}")
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    print(f"medians of {args.runs} runs" + (f" under {args.wrapper}" if args.wrapper else ""))
    for r in [header] + rows:
        print("  ".join(x.ljust(widths[i]) if i == 0 else x.rjust(widths[i]) for i, x in enumerate(r)))


if __name__ == "__main__":
    main()
