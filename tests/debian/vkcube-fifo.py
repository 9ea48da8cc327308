#!/usr/bin/env python3
"""A real FIFO client with the installed module: Mesa's lavapipe driving vkcube in FIFO present
mode, in sway (headless, pixman, its output at 60 Hz) with libpixelport-preload.so (tests/debian/
check-installed runs it in the Debian 13 leg; Mesa 25 speaks wp_fifo_v1 and wp_commit_timing_v1).

    vkcube-fifo.py PRELOAD [FRAMES]

1. vkcube shown: its frames are presented at the output's refresh (the median interval between
   presentations within 20% of it, none more than twice it apart), and the timing log has its
   commits with set_barrier + wait_barrier and with commit-timing targets.
2. vkcube moved to the scratchpad (hidden): it runs on, a refresh a frame at most, where
   without the module Mesa's FIFO present waits for frame callbacks that never come.
Prints one line per check; exit status 0 when every check passed, 1 otherwise, 77 when vkcube,
lavapipe or sway is missing.
"""
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

preload = sys.argv[1]
frames = int(sys.argv[2]) if len(sys.argv) > 2 else 240
REFRESH_NS = 1e12 / 60000
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what, flush=True)
    if not cond:
        failures.append(what)


icd = sorted(glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json"))
vkcube = ["vkcube-wayland"] if shutil.which("vkcube-wayland") else ["vkcube", "--wsi", "wayland"]
missing = [what for what, there in (("sway", shutil.which("sway")), ("swaymsg", shutil.which("swaymsg")),
                                     ("vkcube", shutil.which(vkcube[0])), ("lavapipe", icd)) if not there]
if missing:
    print(f"vkcube-fifo: skipped, no {', '.join(missing)} (apt-get install sway vulkan-tools mesa-vulkan-drivers)")
    sys.exit(77)

run = tempfile.mkdtemp(prefix="pixelport-vkcube-")
os.chmod(run, 0o700)
log = os.path.join(run, "timing.jsonl")
config = os.path.join(run, "sway.conf")
with open(config, "w") as f:
    f.write("output * mode 640x480@60Hz\ndefault_border none\ndefault_floating_border none\n"
            "for_window [title=\"vkcube\"] floating enable, move absolute position 0 0\nxwayland disable\n")
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": run, "XDG_RUNTIME_DIR": run,
       "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_HEADLESS_OUTPUTS": "1",
       "WLR_LIBINPUT_NO_DEVICES": "1", "LD_PRELOAD": preload, "PIXELPORT_TIMING_LOG": log}
if os.environ.get("LD_LIBRARY_PATH"):  # a sway built against a wlroots of its own (not the leg's)
    env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
sway = subprocess.Popen(["sway", "-c", config], env=env, stdout=subprocess.DEVNULL,
                        stderr=open(os.path.join(run, "sway.log"), "w"), start_new_session=True)
try:
    sock = ipc = None
    for _ in range(200):
        sock = next(iter(glob.glob(os.path.join(run, "wayland-*[0-9]"))), None)
        ipc = next(iter(glob.glob(os.path.join(run, "sway-ipc.*.sock"))), None)
        if sock and ipc:
            break
        time.sleep(0.05)
    check(bool(sock and ipc), "sway started (its Wayland and IPC sockets)")
    if not (sock and ipc):
        sys.exit(1)
    client = {"PATH": env["PATH"], "HOME": run, "XDG_RUNTIME_DIR": run, "WAYLAND_DISPLAY": os.path.basename(sock),
              "SWAYSOCK": ipc, "VK_DRIVER_FILES": icd[0], "VK_ICD_FILENAMES": icd[0]}
    argv = vkcube + ["--present_mode", "2", "--width", "256", "--height", "256"]

    # 1. Shown: presented at the refresh.
    t0 = time.monotonic()
    r = subprocess.run(argv + ["--c", str(frames)], env=client, capture_output=True, text=True, timeout=120)
    shown_s = time.monotonic() - t0
    check(r.returncode == 0, f"vkcube FIFO, {frames} frames shown: exit {r.returncode} in {shown_s:.1f} s "
          f"{(r.stdout + r.stderr)[-300:]!r}")

    # 2. Hidden: on no output, not paced, not stalled.
    p = subprocess.Popen(argv + ["--c", str(4 * frames)], env=client, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    moved = False
    for _ in range(100):
        tree = subprocess.run(["swaymsg", "-t", "get_tree"], env=client, capture_output=True, text=True).stdout
        if '"vkcube"' in tree:
            moved = subprocess.run(["swaymsg", '[title="vkcube"] move scratchpad'], env=client,
                                   capture_output=True).returncode == 0
            break
        time.sleep(0.05)
    check(moved, "vkcube's second window moved to the scratchpad (hidden)")
    t0 = time.monotonic()
    try:
        status = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        status = "stalled (killed after 120 s)"
    hidden_s = time.monotonic() - t0
    # Never stuck: stock sway sends a hidden window no frame callback, and Mesa's FIFO present
    # waits for them (the same run without the module: killed after 60 s). With the module it
    # runs on, a refresh a frame at most: sway 1.10's scratchpad keeps the surface on its output
    # (wlroots 0.18's scene sends no leave for a disabled node), so its barrier and its targets
    # still pace it; a scene that takes it off the output lets it run at lavapipe's pace.
    paced_s = 4 * frames * REFRESH_NS / 1e9
    check(status == 0 and hidden_s < 1.5 * paced_s,
          f"hidden vkcube, {4 * frames} frames: exit {status} in {hidden_s:.1f} s "
          f"(a refresh each: {paced_s:.1f} s; stuck would be 120 s)")
finally:
    os.killpg(sway.pid, signal.SIGTERM)
    try:
        sway.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(sway.pid, signal.SIGKILL)

# The timing log of the shown run: vkcube's first surface.
commits = []
with open(log) as f:
    for line in f:
        j = json.loads(line)
        if j.get("type") == "commit" and j.get("title") == "vkcube":
            commits.append(j)
first = min((c["surface"] for c in commits), default=None)
shown = [c for c in commits if c["surface"] == first]
fifo = sum(1 for c in shown if c.get("fifo") == "set+wait")
timed = sum(1 for c in shown if c.get("t_target") is not None)
waited = sum(1 for c in shown if c.get("barrier_wait_ns", 0) > 0)
check(fifo >= frames // 2, f"{fifo} of {len(shown)} shown commits with set_barrier + wait_barrier in the timing log")
check(timed >= frames // 2, f"{timed} of {len(shown)} shown commits with a commit-timing target in the timing log")
# From the 10th on: sway shows a new window once its configure settled.
times = sorted(c["t_present"] for c in shown if c["t_present"] is not None)[10:]
gaps = [b - a for a, b in zip(times, times[1:])]
median = statistics.median(gaps) if gaps else 0
check(gaps and 0.8 * REFRESH_NS < median < 1.2 * REFRESH_NS and max(gaps) < 2 * REFRESH_NS + 5e6,
      f"{len(times)} presentations, interval median {median / 1e6:.2f} ms, max {max(gaps or [0]) / 1e6:.2f} ms "
      f"(refresh {REFRESH_NS / 1e6:.2f} ms); {waited} commits waited for a barrier")
late = [c["t_present"] - c["t_target"] for c in shown if c.get("t_target") and c["t_present"]]
if late:
    check(min(late) >= 0, f"targets: shown {min(late) / 1e6:.2f} to {max(late) / 1e6:.2f} ms after them")
shutil.rmtree(run, ignore_errors=True)
print(f"vkcube-fifo: {'every check passed' if not failures else f'{len(failures)} failed'}")
sys.exit(1 if failures else 0)
