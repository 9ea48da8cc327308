#!/usr/bin/env python3
"""What a second, well-behaved client sees while another one works the compositor hard: its
roundtrips' worst and 99th percentile, plugin against stock wlroots in the same run, with the
machine quiet and with one core kept busy.

pixelport-probe-client (a wl_display.sync every 10 ms) beside one workload, in a fresh
pixelport-compositor per run (the plugin, or stock: --no-plugin) on a 256x256 output (as the
integration tests: what is measured is the clients' handling, not drawing); its figures cover the workload
from its start until it ended and AFTER seconds more (the client's teardown is in the window).
Variants alternate run by run; "busy" runs have `sh -c 'while :; do :; done'` beside them,
started before the compositor and ended by its process id after the run.

  bench/second_client.py [--build build] [--runs 5] [--cases leave,storm,stream]
                         [--loads quiet,busy] [--json FILE] [--compositor PATH]

--compositor: another pixelport-compositor binary (e.g. one built before a change, copied into
BUILD/hosts/compositor/ so that it finds the plugin as the built one does) for the plugin
variants; stock runs the build's.

Cases (the workload's program and arguments; stock gets what it serves of the same):
  leave   pixelport-conversion-attack sync-children-exit 24 2560 1440: 24 synchronized
          children, 8 rounds committed without waiting, then _exit (NV12 with the plugin,
          --image-budget-client 1 GiB as the test; XRGB8888 stock); 1.5 s after its exit
  storm   pixelport-conversion-attack storm-sizes 1024 2560 1440: 1024 commits of NV12
          buffers in 64 sizes as fast as the client can (XRGB8888 stock)
  stream  pixelport-stream-client burst-frames 10 3840 2160: ten 4K NV12 frames over a
          socket, each frame's bytes all queued before its write is announced (one burst),
          each once the last was presented; against the same frames over wl_shm
          (pixelport-conversion-attack same-frames 10 3840 2160: NV12 with the plugin,
          XRGB8888 stock)
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CASES = {
    # name: [(variant, stock, compositor args, client argv (after the build dir), seconds after)]
    "leave": [
        ("plugin", False, ["--image-budget-client", "1073741824"],
         ["tests/integration/pixelport-conversion-attack", "sync-children-exit", "24", "2560", "1440"], 1.5),
        ("stock", True, [],
         ["tests/integration/pixelport-conversion-attack", "sync-children-exit", "24", "2560", "1440"], 1.5),
    ],
    "storm": [
        ("plugin", False, [], ["tests/integration/pixelport-conversion-attack", "storm-sizes", "1024", "2560", "1440"],
         0.5),
        ("stock", True, [], ["tests/integration/pixelport-conversion-attack", "storm-sizes", "1024", "2560", "1440"],
         0.5),
    ],
    "stream": [
        ("plugin-stream", False, [], ["tests/integration/pixelport-stream-client", "burst-frames", "10", "3840",
                                      "2160"], 0.5),
        ("plugin-shm", False, [], ["tests/integration/pixelport-conversion-attack", "same-frames", "10", "3840",
                                   "2160"], 0.5),
        ("stock-shm", True, [], ["tests/integration/pixelport-conversion-attack", "same-frames", "10", "3840",
                                 "2160"], 0.5),
    ],
}


@contextlib.contextmanager
def busy_core(on):
    """A process keeping one core busy (none when `on` is false), ended by its process id."""
    if not on:
        yield None
        return
    spin = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        yield spin
    finally:
        spin.kill()
        spin.wait()


def read_line(proc, timeout):
    """One line of proc's stdout within timeout s ("" on EOF or timeout)."""
    import select
    end = time.monotonic() + timeout
    line = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        c = os.read(fd, 1)
        if not c:
            break
        if c == b"\n":
            return line.decode()
        line += c
    return line.decode()


def probe_fields(line):
    return {k: int(v) for k, v in (f.split("=", 1) for f in line.split()[1:] if "=" in f) if v.isdigit()}


def one_run(build, stock, comp_args, client_argv, after_s, compositor=None):
    runtime = tempfile.mkdtemp(prefix="pp-second-")
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, WAYLAND_DISPLAY="second")
    env.pop("LD_LIBRARY_PATH", None)
    binary = compositor if compositor and not stock else f"{build}/hosts/compositor/pixelport-compositor"
    args = [binary, "--socket", "second", "--log-level", "error",
            "--output", "256x256"] + comp_args + (["--no-plugin"] if stock else [])
    comp = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = None
    try:
        end = time.monotonic() + 10
        while not os.path.exists(f"{runtime}/second") and time.monotonic() < end:
            time.sleep(0.01)  # the polling interval
        probe = subprocess.Popen([f"{build}/tests/integration/pixelport-probe-client"], env=env,
                                 stdout=subprocess.PIPE)
        if read_line(probe, 10) != "probe ready":
            sys.exit("the probe did not start")
        probe.send_signal(signal.SIGUSR1)
        read_line(probe, 5)  # start-up figures: discarded
        t0 = time.monotonic()
        client = subprocess.run([f"{build}/{client_argv[0]}", *client_argv[1:]], env=env, capture_output=True,
                                text=True, timeout=300)
        if client.returncode not in (0,) or "error" in client.stdout:
            sys.exit(f"{' '.join(client_argv)}: status {client.returncode}: {client.stdout} {client.stderr}")
        time.sleep(after_s)  # the window measured goes on this long after the client left
        probe.send_signal(signal.SIGUSR1)
        fields = probe_fields(read_line(probe, 10))
        fields["seconds"] = time.monotonic() - t0
        return fields
    finally:
        if probe is not None:
            probe.kill()
            probe.wait()
        comp.terminate()
        comp.wait(10)
        shutil.rmtree(runtime, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cases", default="leave,storm,stream")
    p.add_argument("--loads", default="quiet,busy")
    p.add_argument("--json")
    p.add_argument("--compositor")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    results = []
    for case in a.cases.split(","):
        for load in a.loads.split(","):
            runs = {v[0]: [] for v in CASES[case]}
            for _ in range(a.runs):
                for variant, stock, comp_args, client_argv, after in CASES[case]:
                    with busy_core(load == "busy"):
                        runs[variant].append(one_run(build, stock, comp_args, client_argv, after, a.compositor))
            for variant, rs in runs.items():
                worst = [r["worst_roundtrip_us"] / 1000 for r in rs]
                p99 = [r.get("p99_roundtrip_us", 0) / 1000 for r in rs]
                row = {"case": case, "load": load, "variant": variant, "worst_ms": worst, "p99_ms": p99}
                results.append(row)
                print(f"{case:6} {load:5} {variant:13} worst ms: median {statistics.median(worst):7.1f} "
                      f"max {max(worst):7.1f}  p99 ms: median {statistics.median(p99):6.1f} max {max(p99):6.1f}  "
                      f"all worst: {' '.join(f'{w:.1f}' for w in worst)}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
