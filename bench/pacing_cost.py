#!/usr/bin/env python3
"""What wp_fifo_v1 costs the compositor's main thread: a client committing at 60 Hz with
set_barrier + wait_barrier on every frame against the same client without them, in one run.

pixelport-pacing-client fifo FORMAT shm FRAMES WxH 60 [nofifo], each run in a fresh
pixelport-compositor with the plugin (60 Hz headless output), rounds alternating (every other
round in reverse order). Per shown frame: the compositor's main-thread CPU (the first task's
schedstat, ns on a CPU) and its whole CPU (workers included, utime + stime of the process).
Ratios are fifo / without of the same round; the median of the rounds is printed last.

  bench/pacing_cost.py [--build build] [--frames 300] [--rounds 3] [--formats XRGB8888,NV12]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def main_thread_ns(pid):
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def process_ns(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // TICK


def run(build, fmt, size, frames, fifo):
    runtime = tempfile.mkdtemp(prefix="pp-pacing-")
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, WAYLAND_DISPLAY="pacing")
    comp = subprocess.Popen([f"{build}/hosts/compositor/pixelport-compositor", "--socket", "pacing", "--output",
                             "1280x720@60", "--log-level", "error"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists(f"{runtime}/pacing"):
                break
            time.sleep(0.01)
        time.sleep(0.2)
        main0, proc0 = main_thread_ns(comp.pid), process_ns(comp.pid)
        argv = [f"{build}/tests/integration/pixelport-pacing-client", "fifo", fmt, "shm", str(frames), size, "60"]
        out = subprocess.run(argv + ([] if fifo else ["nofifo"]), env=env, capture_output=True, text=True,
                             timeout=120).stdout
        main1, proc1 = main_thread_ns(comp.pid), process_ns(comp.pid)
    finally:
        comp.terminate()
        comp.wait(timeout=10)
    shown = sum(1 for line in out.splitlines() if line.startswith("frame ") and " presented " in line)
    if shown == 0:
        sys.exit(f"no frame shown ({fmt}, fifo {fifo}): {out[-300:]}")
    return (main1 - main0) / shown, (proc1 - proc0) / shown, shown


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--formats", default="XRGB8888,NV12")
    ap.add_argument("--size", default="640x480")
    args = ap.parse_args()
    print(f"pacing cost: {args.frames} frames of {args.size} at 60 Hz per run, {args.rounds} rounds; "
          "main thread and whole process, us per shown frame")
    for fmt in args.formats.split(","):
        ratios, procs = [], []
        for rnd in range(args.rounds):
            order = [True, False] if rnd % 2 == 0 else [False, True]
            got = {fifo: run(args.build, fmt, args.size, args.frames, fifo) for fifo in order}
            (mf, pf, sf), (mn, pn, sn) = got[True], got[False]
            ratios.append(mf / mn)
            procs.append(pf / pn)
            print(f"  {fmt} round {rnd + 1}: fifo main {mf / 1e3:.1f} us, process {pf / 1e3:.1f} us ({sf} shown); "
                  f"without main {mn / 1e3:.1f} us, process {pn / 1e3:.1f} us ({sn} shown); "
                  f"main thread fifo/without {mf / mn:.2f}x")
        print(f"{fmt}: main thread fifo/without {statistics.median(ratios):.2f}x (rounds "
              f"{min(ratios):.2f}-{max(ratios):.2f}), whole process {statistics.median(procs):.2f}x")


if __name__ == "__main__":
    main()
