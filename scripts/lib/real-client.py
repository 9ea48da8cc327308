#!/usr/bin/env python3
"""A real video client: GStreamer's waylandsink in pixelport-compositor.

Plays the same NV12 clip (videotestsrc, the size and rate asked) in alternating rounds:
  pixelport  with the plugin; waylandsink sends NV12 over wl_shm, the plugin converts it
  stock      --no-plugin (stock wlroots 0.18 has no YUV on pixman); the client converts to BGRx
             first (videoconvert), as it must there
and prints, per variant, the frames shown and dropped (fpsdisplaysink's QoS drops) and the CPU
time of the compositor and of the client per rendered frame (ms, user + system; medians over
the rounds), with the ratio pixelport / stock measured in the same run. Writes real-client.txt
and real-client.json into --out.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a live process (its own threads, not its children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def one_round(args, variant, runtime):
    socket = f"real-client-{variant}"
    cmd = [args.compositor, "--socket", socket, "--output", f"{args.width}x{args.height}@{args.rate}",
           "--log-level", "error"]
    if variant == "stock":
        cmd.append("--no-plugin")
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
        caps = f"video/x-raw,format=NV12,width={args.width},height={args.height},framerate={args.rate}/1"
        pipeline = ["gst-launch-1.0", "-v", "videotestsrc", "pattern=smpte100", f"num-buffers={args.frames}", "!", caps]
        if variant == "stock":
            pipeline += ["!", "videoconvert", "!", "video/x-raw,format=BGRx"]
        pipeline += ["!", "fpsdisplaysink", "video-sink=waylandsink", "text-overlay=false", "fps-update-interval=100"]
        client_env = dict(env, WAYLAND_DISPLAY=socket)
        before = cpu_seconds(comp.pid)
        t0 = os.times()
        client = subprocess.Popen(pipeline, env=client_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out, _ = client.communicate(timeout=max(60, 4 * args.frames / args.rate))
        t1 = os.times()  # the client, reaped: this process's only child that ended meanwhile
        after = cpu_seconds(comp.pid)
    finally:
        comp.terminate()
        comp.wait(timeout=10)
    text = out.decode(errors="replace")
    if client.returncode != 0:
        raise RuntimeError(f"{variant}: gst-launch-1.0 failed ({client.returncode}): {text[-400:]}")
    # fpsdisplaysink reports every 100 ms: the last report may miss the last frames, so frames
    # shown are those sent less those it reported dropped (QoS: too late to show).
    found = re.findall(r"rendered: (\d+), dropped: (\d+)", text)
    dropped = int(found[-1][1]) if found else 0
    rendered = args.frames - dropped
    client_s = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return {"rendered": rendered, "dropped": dropped, "compositor_s": after - before, "client_s": client_s}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--compositor", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--width", type=int, default=1920)
    p.add_argument("--height", type=int, default=1080)
    p.add_argument("--rate", type=int, default=60)
    p.add_argument("--frames", type=int, default=240)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
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
    a, b = summary["pixelport"], summary["stock"]
    lines = [
        f"real client: GStreamer waylandsink, {args.frames} frames of {args.width}x{args.height}@{args.rate} NV12, "
        f"median of {args.rounds} alternating rounds",
        f"  {'':10} {'shown':>8} {'dropped':>7} {'compositor':>11} {'client':>8} {'both':>8}  (CPU ms per frame)",
    ]
    for name, s, how in (("pixelport", a, "NV12 over wl_shm, converted by the plugin"),
                         ("stock", b, "client converts to BGRx (videoconvert), stock wlroots")):
        lines.append(f"  {name:10} {s['rendered']:8.0f} {s['dropped']:7.0f} {s['compositor_ms_per_frame']:11.2f} "
                     f"{s['client_ms_per_frame']:8.2f} {s['total_ms_per_frame']:8.2f}  {how}")
    ratio = a["total_ms_per_frame"] / b["total_ms_per_frame"] if b["total_ms_per_frame"] else float("nan")
    lines.append(f"  compositor + client CPU per frame: pixelport {ratio:.2f}x of stock")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "real-client.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "real-client.json"), "w") as f:
        json.dump({"width": args.width, "height": args.height, "rate": args.rate, "frames": args.frames,
                   "rounds": args.rounds, "ratio_total": ratio, **summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
