#!/usr/bin/env python3
"""A real video client: GStreamer's waylandsink in pixelport-compositor.

Plays the same NV12 clip (videotestsrc, the size and rate asked) in alternating rounds:
  pixelport  with the plugin; waylandsink sends NV12 over wl_shm, the plugin converts it
             (--gstreamer-withhold none, the default here: the plugin's own default withholds
             4:2:0 from GStreamer's clients, docs/design.md; with another SPEC the client gets
             videoconvert too and sends what it is offered, NV16 under "auto")
  stock      --no-plugin (stock wlroots 0.18 has no YUV on pixman); the client converts to BGRx
             first (videoconvert), as it must there
and prints, per variant, the frames shown and dropped (fpsdisplaysink's QoS drops) and the CPU
time of the compositor and of the client per rendered frame (ms, user + system; medians over
the rounds), with the ratio pixelport / stock measured in the same run. Writes real-client.txt
and real-client.json into --out.

Each round also measures the playing window, from the first frames shown (fpsdisplaysink's first
report) until the client ends, start-up left out:
  main thread  CPU time (user + system) of the compositor's main thread (the thread whose tid is
               its pid: the Wayland event loop, where every client is served) over the window's
               wall time, in % of one core
  process      the same for the whole compositor process; "other" = process - main thread
  probe        a second, well-behaved client (pixelport-probe-client --size 64, started once the
               first frames are shown) syncs every 10 ms: the median, 99th percentile and worst of
               its wl_display roundtrips in the window (ms), i.e. how long any other client waits
               for the compositor while the video plays
and prints them per variant (medians over the rounds) with the ratio pixelport / stock.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import videoplay  # noqa: E402  (next to this file)


def one_round(args, variant, runtime):
    socket = f"real-client-{variant}"
    cmd = [args.compositor, "--socket", socket, "--output", args.output,
           "--log-level", "error"]
    if variant == "stock":
        cmd.append("--no-plugin")
    else:
        cmd += ["--gstreamer-withhold", args.gstreamer_withhold]
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    env.pop("WAYLAND_DISPLAY", None)
    comp = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        path = os.path.join(runtime, socket)
        for _ in range(100):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{variant}: the compositor did not start: {comp.stderr.read().decode()[-400:]}")
        convert_to = None
        if variant == "stock":
            convert_to = "BGRx"
        elif args.gstreamer_withhold.strip().lower() != "none":
            convert_to = ""  # videoconvert picks among what this client is offered
        argv = videoplay.pipeline(args.width, args.height, args.rate, args.frames, convert_to=convert_to)
        client_env = dict(env, WAYLAND_DISPLAY=socket)
        try:
            return videoplay.play(argv, client_env, comp.pid, args.frames, args.rate, args.probe, args.probe_size)
        except videoplay.PlayError as e:
            raise RuntimeError(f"{variant}: {e}") from None
    finally:
        comp.terminate()
        comp.wait(timeout=10)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--compositor", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--width", type=int, default=1920)
    p.add_argument("--height", type=int, default=1080)
    p.add_argument("--rate", type=int, default=60)
    p.add_argument("--frames", type=int, default=240)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", help="the compositor's output mode WIDTHxHEIGHT@HZ (default: the video's size and rate)")
    p.add_argument("--probe", help="pixelport-probe-client, the second client (default: $PIXELPORT_PROBE_CLIENT, "
                   "else tests/integration/pixelport-probe-client in the compositor's build tree)")
    p.add_argument("--no-probe", action="store_true", help="no second client (no roundtrip columns)")
    p.add_argument("--probe-size", type=int, default=64, help="the second client's window side (default 64)")
    p.add_argument("--gstreamer-withhold", default="none", metavar="SPEC",
                   help="the plugin variant's pixelport-compositor --gstreamer-withhold (default none: NV12 "
                        "reaches the plugin; auto: the plugin's default rule, the client converts to what it is offered)")
    args = p.parse_args()
    if args.output is None:
        args.output = f"{args.width}x{args.height}@{args.rate}"
    if args.no_probe:
        args.probe = None
    elif args.probe is None:
        # The build tree's hosts/compositor/pixelport-compositor: two folders up is the build.
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(args.compositor))))
        for candidate in (os.environ.get("PIXELPORT_PROBE_CLIENT"),
                          os.path.join(build, "tests", "integration", "pixelport-probe-client")):
            if candidate and os.access(candidate, os.X_OK):
                args.probe = candidate
                break
    elif not os.access(args.probe, os.X_OK):
        p.error(f"--probe {args.probe}: not an executable")
    for tool in ("gst-launch-1.0", "gst-inspect-1.0"):
        if shutil.which(tool) is None:
            print("real client: skipped: GStreamer is not installed "
                  "(apt-get install gstreamer1.0-tools gstreamer1.0-plugins-bad)")
            return 0
    if subprocess.run(["gst-inspect-1.0", "waylandsink"], capture_output=True).returncode != 0:
        print("real client: skipped: no waylandsink (apt-get install gstreamer1.0-plugins-bad)")
        return 0
    os.makedirs(args.out, exist_ok=True)
    runtime = tempfile.mkdtemp(prefix="pixelport-real-client-")
    os.chmod(runtime, 0o700)
    rounds = {"pixelport": [], "stock": []}
    try:
        for _ in range(args.rounds):
            for variant in ("pixelport", "stock"):  # alternating: drift hits both alike
                rounds[variant].append(one_round(args, variant, runtime))
    finally:
        shutil.rmtree(runtime, ignore_errors=True)

    def per_frame(r, key):
        return 1000 * r[key] / r["rendered"] if r["rendered"] else float("nan")

    summary = {}
    for variant, rs in rounds.items():
        summary[variant] = {
            "rendered": statistics.median(r["rendered"] for r in rs),
            "dropped": statistics.median(r["dropped"] for r in rs),
            "compositor_ms_per_frame": statistics.median(per_frame(r, "compositor_s") for r in rs),
            "client_ms_per_frame": statistics.median(per_frame(r, "client_s") for r in rs),
            "rounds": rs,
        }
        s = summary[variant]
        s["total_ms_per_frame"] = s["compositor_ms_per_frame"] + s["client_ms_per_frame"]
        # The playing window: medians over the rounds that have it (None if none has).
        for key, get in (("window_s", lambda r: r.get("window_s")),
                         ("main_thread_pct", lambda r: r.get("main_thread_pct")),
                         ("process_pct", lambda r: r.get("process_pct")),
                         ("other_threads_pct", lambda r: r.get("other_threads_pct")),
                         ("probe_roundtrips", lambda r: r["probe"]["roundtrips"] if "probe" in r else None),
                         ("probe_p50_ms", lambda r: r.get("probe", {}).get("p50_roundtrip_us", math.nan) / 1000),
                         ("probe_p99_ms", lambda r: r.get("probe", {}).get("p99_roundtrip_us", math.nan) / 1000),
                         ("probe_worst_ms", lambda r: r["probe"]["worst_roundtrip_us"] / 1000 if "probe" in r else None)):
            values = [v for v in map(get, rs) if v is not None and not math.isnan(v)]
            s[key] = statistics.median(values) if values else None
    a, b = summary["pixelport"], summary["stock"]

    def ratio_of(key):
        x, y = a.get(key), b.get(key)
        return x / y if x is not None and y else None

    window_keys = ("main_thread_pct", "process_pct", "other_threads_pct", "probe_p50_ms", "probe_p99_ms",
                   "probe_worst_ms", "rendered", "dropped")
    ratios = {key: ratio_of(key) for key in window_keys}
    lines = [
        f"real client: GStreamer waylandsink, {args.frames} frames of {args.width}x{args.height}@{args.rate} NV12, "
        f"median of {args.rounds} alternating rounds",
        f"  {'':10} {'shown':>8} {'dropped':>7} {'compositor':>11} {'client':>8} {'both':>8}  (CPU ms per frame)",
    ]
    plugin_how = ("NV12 over wl_shm, converted by the plugin" if args.gstreamer_withhold.strip().lower() == "none"
                  else f"--gstreamer-withhold {args.gstreamer_withhold}: what videoconvert picks, then the plugin")
    for name, s, how in (("pixelport", a, plugin_how),
                         ("stock", b, "client converts to BGRx (videoconvert), stock wlroots")):
        lines.append(f"  {name:10} {s['rendered']:8.0f} {s['dropped']:7.0f} {s['compositor_ms_per_frame']:11.2f} "
                     f"{s['client_ms_per_frame']:8.2f} {s['total_ms_per_frame']:8.2f}  {how}")
    ratio = a["total_ms_per_frame"] / b["total_ms_per_frame"] if b["total_ms_per_frame"] else float("nan")
    lines.append(f"  compositor + client CPU per frame: pixelport {ratio:.2f}x of stock")
    probe_how = (f"a second client ({os.path.basename(args.probe)} --size {args.probe_size}) syncs every 10 ms"
                 if args.probe else "no second client (no pixelport-probe-client)")
    lines += [
        f"  while it plays (from the first frames shown to the end, output {args.output}; {probe_how}):",
        f"  {'':16} {'main thread':>11} {'process':>8} {'other':>7} {'probe p50':>10} {'p99':>7} {'worst':>7} "
        f"{'shown':>6} {'dropped':>7}",
        f"  {'':16} {'(compositor CPU, % of one core)':>28} {'(roundtrip ms)':>26}",
    ]

    def cell(v, width, fmt, suffix=""):
        return f"{format(v, fmt) + suffix:>{width}}" if v is not None else f"{'-':>{width}}"

    for name, s in (("pixelport", a), ("stock", b)):
        lines.append(f"  {name:16} {cell(s['main_thread_pct'], 11, '.1f', '%')} {cell(s['process_pct'], 8, '.1f', '%')} "
                     f"{cell(s['other_threads_pct'], 7, '.1f', '%')} {cell(s['probe_p50_ms'], 10, '.2f')} "
                     f"{cell(s['probe_p99_ms'], 7, '.2f')} {cell(s['probe_worst_ms'], 7, '.2f')} "
                     f"{cell(s['rendered'], 6, '.0f')} {cell(s['dropped'], 7, '.0f')}")
    r = ratios
    lines.append(f"  {'pixelport/stock':16} {cell(r['main_thread_pct'], 11, '.2f', 'x')} "
                 f"{cell(r['process_pct'], 8, '.2f', 'x')} {cell(r['other_threads_pct'], 7, '.2f', 'x')} "
                 f"{cell(r['probe_p50_ms'], 10, '.2f', 'x')} {cell(r['probe_p99_ms'], 7, '.2f', 'x')} "
                 f"{cell(r['probe_worst_ms'], 7, '.2f', 'x')} {cell(r['rendered'], 6, '.2f', 'x')} "
                 f"{cell(r['dropped'], 7, '.2f', 'x')}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "real-client.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "real-client.json"), "w") as f:
        json.dump({"width": args.width, "height": args.height, "rate": args.rate, "frames": args.frames,
                   "gstreamer_withhold": args.gstreamer_withhold,
                   "rounds": args.rounds, "output": args.output,
                   "probe": {"path": args.probe, "size": args.probe_size} if args.probe else None,
                   "ratio_total": ratio, **summary, "ratios": ratios}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
