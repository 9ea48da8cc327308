#!/usr/bin/env python3
"""Guest instructions per pixel of each conversion, counted exactly under qemu-user.

Under emulation times mean little (TCG runs scalar code almost natively and many vector
instructions through helpers), but the instructions a conversion executes are the guest's own
and do not depend on the emulator. This runs `pixelport-bench-convert --calls N VARIANT CONV WxH`
under qemu-user with `-d nochain,in_asm,exec` (every translated block's instructions, then a
line per block executed; nochain so that no block runs unlogged), once with a few calls and
once with more, and divides the difference by the extra calls and pixels: program start and
image setup cancel out.

    bench/count_instructions.py --wrapper 'qemu-aarch64 -L /usr/aarch64-linux-gnu' \\
        build-aarch64-bench/bench/pixelport-bench-convert 'NV12->XRGB8888'

Instructions are not cycles: a vector instruction can cost more cycles than a scalar one, so
a count ratio bounds a speed-up rather than measures it.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import tempfile

IN_ADDR = re.compile(r"^0x([0-9a-f]+):\s")
# qemu 7.2: "Trace 0: HOSTPTR [CFLAGS?/PC/FLAGS/CFLAGS] SYMBOL" (the second field is the guest pc)
TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


def count(cmd, log):
    """Guest instructions executed by `cmd` (a list), from qemu's -d log written to `log`."""
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    size = {}  # first pc of a translated block -> its instructions
    runs = collections.Counter()
    block, n = None, 0
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("Trace"):
                m = TRACE.match(line)
                if m:
                    runs[int(m.group(1), 16)] += 1
                continue
            if line.startswith("IN:"):
                if block is not None:
                    size[block] = n
                block, n = None, 0
                continue
            m = IN_ADDR.match(line)
            if m:
                if block is None:
                    block = int(m.group(1), 16)
                n += 1
        if block is not None:
            size[block] = n
    missing = [pc for pc in runs if pc not in size]
    if missing:
        sys.exit(f"count_instructions: {len(missing)} executed blocks were never listed (log format?)")
    return sum(size[pc] * k for pc, k in runs.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wrapper", required=True, help="qemu-user command line (qemu-aarch64 -L SYSROOT)")
    ap.add_argument("--size", default="1920x128", help="WxH (default 1920x128: whole rows, short log)")
    ap.add_argument("--calls", default="1,3", help="FEW,MORE calls (default 1,3)")
    ap.add_argument("--variants", default="scalar-1t,simd-1t,libyuv-1t")
    ap.add_argument("binary")
    ap.add_argument("conversions", nargs="+", help="SRC->DST as in the tables")
    args = ap.parse_args()
    few, more = (int(x) for x in args.calls.split(","))
    w, h = (int(x) for x in args.size.split("x"))
    variants = args.variants.split(",")
    results, failed = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "qemu.log")
        for conv in args.conversions:
            for v in variants:
                per_call = []
                for n in (few, more):
                    cmd = shlex.split(args.wrapper) + ["-d", "nochain,in_asm,exec", "-D", log,
                                                       args.binary, "--calls", str(n), v, conv, args.size]
                    try:
                        per_call.append(count(cmd, log))
                    except subprocess.CalledProcessError as e:
                        if "libyuv has no" not in e.stderr:
                            failed.append(f"{v} {conv}: {e.stderr.strip() or e.returncode}")
                        per_call = None
                        break
                if per_call:
                    results[conv, v] = (per_call[1] - per_call[0]) / (more - few) / (w * h)
    print(f"guest instructions per pixel, {args.size}, calls {few} and {more}, under {args.wrapper}")
    cols = variants + [f"{a}/{b}" for a, b in (("scalar-1t", "simd-1t"), ("libyuv-1t", "simd-1t"))
                       if a in variants and b in variants]
    print(f"{'conversion':28}" + "".join(f"{c:>20}" for c in cols))
    for conv in args.conversions:
        cells = []
        for c in cols:
            if "/" in c:
                a, b = c.split("/")
                x, y = results.get((conv, a)), results.get((conv, b))
                cells.append(f"{x / y:19.2f}x" if x and y else f"{'-':>20}")
            else:
                x = results.get((conv, c))
                cells.append(f"{x:20.2f}" if x else f"{'-':>20}")
        print(f"{conv:28}" + "".join(cells))
    for f in failed:
        print("failed:", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
