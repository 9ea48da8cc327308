#!/usr/bin/env python3
"""Main-thread cost per commit under a commit storm, plugin against stock, in one run; and a
small window's commit-to-presented time beside its own client's 8K video (--beside).

pixelport-conversion-attack MODE N W H (storm-one: one NV12 buffer committed N times as fast as
the client can, a roundtrip every 256; stock wlroots gets the same storm in XRGB8888, the only
kind it takes) against pixelport-compositor with the plugin and with --no-plugin, rounds
alternating. Per commit: the compositor's main-thread CPU (utime + stime of its first task,
/proc/PID/task/PID/stat) and its whole CPU (workers included); its peak RSS (VmHWM); the
client's wall time. Ratios are plugin / stock of the same run.

  bench/commit_storm.py [--build build] [--commits 1000000] [--size 3840x2160] [--rounds 3]
  bench/commit_storm.py --beside [--frames 300] [--size 7680x4320] [--rounds 3]

--beside: pixelport-conversion-attack beside-video (a WxH video, each of its two buffers
committed again as soon as released, and a 256x256 window of the same client committing a
frame each once the last was presented) on a 3840x2160@60 output: the small window's
commit-to-presented p50 and worst, plugin (NV12) against stock (XRGB8888, what it takes).
"""
import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(path):
    # Fields 14 and 15 (utime, stime) after the parenthesised command name.
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


@contextlib.contextmanager
def compositor(build, stock, extra=()):
    """pixelport-compositor (stock: --no-plugin) in a private XDG_RUNTIME_DIR, listening: yields
    the process and the environment a client needs to reach it; ended by process id."""
    runtime = tempfile.mkdtemp(prefix="pp-storm-")
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, WAYLAND_DISPLAY="storm")
    args = [f"{build}/hosts/compositor/pixelport-compositor", "--socket", "storm", "--log-level", "error",
            *extra] + (["--no-plugin"] if stock else [])
    comp = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists(f"{runtime}/storm"):
                break
            time.sleep(0.01)
        time.sleep(0.2)
        yield comp, env
    finally:
        comp.terminate()
        comp.wait(10)
        shutil.rmtree(runtime, ignore_errors=True)


def attack(build, env, args, timeout):
    return subprocess.run([f"{build}/tests/integration/pixelport-conversion-attack", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def beside_round(build, stock, frames, width, height):
    with compositor(build, stock, ["--output", "3840x2160@60"]) as (_, env):
        out = attack(build, env, ["beside-video", frames, width, height], 600).stdout
        fields = dict(f.split("=") for f in out.split() if "=" in f)
        if f"presented {frames} " not in out:
            sys.exit(f"beside-video {'stock' if stock else 'plugin'}: {out}")
        return {"p50_ms": int(fields["p50_us"]) / 1e3, "worst_ms": int(fields["worst_us"]) / 1e3}


def one_round(build, stock, commits, width, height):
    with compositor(build, stock) as (comp, env):
        main = f"/proc/{comp.pid}/task/{comp.pid}/stat"
        whole = f"/proc/{comp.pid}/stat"
        main0, whole0 = cpu_ticks(main), cpu_ticks(whole)
        t0 = time.monotonic()
        client = attack(build, env, ["storm-one", commits, width, height], 1800)
        wall = time.monotonic() - t0
        main1, whole1 = cpu_ticks(main), cpu_ticks(whole)
        if client.returncode != 0 or "error" in client.stdout:
            sys.exit(f"storm-one {'stock' if stock else 'plugin'} failed: {client.stdout} {client.stderr}")
        return {
            "main_us": (main1 - main0) * 1e6 / TICK / commits,
            "whole_us": (whole1 - whole0) * 1e6 / TICK / commits,
            "wall_us": wall * 1e6 / commits,
            "hwm_mib": hwm_kib(comp.pid) / 1024,
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--commits", type=int, default=1000000)
    p.add_argument("--size", default="3840x2160")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--beside", action="store_true")
    p.add_argument("--frames", type=int, default=300)
    a = p.parse_args()
    if a.beside:
        width, height = (int(v) for v in (a.size if a.size != "3840x2160" else "7680x4320").split("x"))
        runs = {"plugin": [], "stock": []}
        for _ in range(a.rounds):
            for name in ("plugin", "stock"):
                runs[name].append(beside_round(a.build, name == "stock", a.frames, width, height))
        print(f"beside-video: a 256x256 window's commit-to-presented beside its own client's {width}x{height} "
              f"video (NV12 with the plugin, XRGB8888 stock), {a.frames} frames, median of {a.rounds} rounds")
        for key in ("p50_ms", "worst_ms"):
            plugin = statistics.median(r[key] for r in runs["plugin"])
            stock = statistics.median(r[key] for r in runs["stock"])
            print(f"  {key}: plugin {plugin:.1f}, stock {stock:.1f}, plugin/stock {plugin / stock:.2f}x")
        return
    width, height = (int(v) for v in a.size.split("x"))
    runs = {"plugin": [], "stock": []}
    for _ in range(a.rounds):
        for name in ("plugin", "stock"):
            runs[name].append(one_round(a.build, name == "stock", a.commits, width, height))
    print(f"storm-one, {a.commits} commits of one {a.size} buffer (NV12 with the plugin, XRGB8888 stock), "
          f"median of {a.rounds} rounds")
    for key, what in (("main_us", "main thread CPU per commit, us"), ("whole_us", "compositor CPU per commit, us"),
                      ("wall_us", "client wall time per commit, us"), ("hwm_mib", "compositor peak RSS, MiB")):
        plugin = statistics.median(r[key] for r in runs["plugin"])
        stock = statistics.median(r[key] for r in runs["stock"])
        print(f"  {what}: plugin {plugin:.2f}, stock {stock:.2f}, plugin/stock {plugin / stock:.2f}x")


if __name__ == "__main__":
    main()
