#!/usr/bin/env python3
"""The same workloads in several compositors, side by side (scripts/demo --compositors; installed
as pixelport-compositors, pixelport-compositors(1)).

    compositors.py --out DIR [--compositors LIST] [--quick] [--build DIR] [--rounds N]

Each compositor runs headless in a private XDG_RUNTIME_DIR (0700; Mutter and KWin also on a
private D-Bus session bus), is started and ended by its process id, once per workload and round,
rounds alternating between compositors (every other round in reverse order, so that drift hits
all alike). Workloads, all measured from the client side so that they mean the same everywhere:
  video    GStreamer waylandsink playing NV12 (1080p60; 4K30 too unless --quick): NV12 over wl_shm
           where the compositor advertises it, else converted to BGRx in the client (videoconvert);
           the CPU of compositor and client per shown frame, frames shown and dropped, a second
           client's roundtrips while it plays, the compositor's RSS at the end
  present  pixelport-sweep's client view over wl_shm (XRGB8888, and NV12 where advertised) at
           the video's size: commit to presented (wp_presentation), the frame callbacks'
           interval, commit to the buffer's release, and the client's submit time
  pacing   a FIFO client (pixelport-pacing-client, from a build: $PIXELPORT_PACING_CLIENT or
           BUILD/tests/integration): 60 frames as fast as its two buffers come back, with
           wp_fifo_v1 where advertised, else each after the last one's frame callback (Mesa's
           FIFO present mode either way): intervals between presentations, frames skipped
           (more than 1.5 refreshes apart) or never shown; and where wp_commit_timing_v1 is
           advertised, 12 timed commits: how far from its target each showed
A compositor that is missing or does not start gets a row with the reason; one that starts and
then gives no numbers (or dies) is an error: exit status 1. Writes compositors.json, then the
report (compositors_report.py: compositors.txt, .csv and the plots).
"""
import argparse
import atexit
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# Its modules: beside it in a checkout, in PREFIX/share/pixelport/python when installed.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(os.path.dirname(here), "share", "pixelport", "python")]
import compositors_report  # noqa: E402
import videoplay  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Every name --compositors takes, in the order rows are shown.
NAMES = ["reference", "reference-stock", "sway", "sway-stock", "labwc", "labwc-stock", "cage", "cage-stock",
         "weston-gl", "weston-pixman", "mutter", "kwin"]
SOCKET = "wayland-cmp"
# pixelport-sweep's phases kept from the present workload (pixelport-sweep(1), "Phases"): the
# client's four, then the plugin's own two where it is loaded (timing protocol).
PRESENT_PHASES = ("latency", "frame_interval", "release", "submit", "convert", "upload")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def first_line(argv, env=None):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return ((r.stdout or "") + (r.stderr or "")).strip().split("\n")[0]


def version_of(argv, env=None):
    m = re.search(r"\d+(\.\d+)+", first_line(argv, env))
    return m.group(0) if m else ""


def software_gl():
    """Without a render node Mesa runs GL on the CPU (llvmpipe)."""
    return not glob.glob("/dev/dri/renderD*")


class Peer:
    """One compositor as a row: how to start it, or why it cannot be."""

    def __init__(self, name):
        self.name, self.reason, self.label, self.notes = name, None, name, []
        self.gl = False
        self.bus = False  # a private D-Bus session bus (Mutter, KWin)
        self.named_socket = True  # takes the socket's name; else the first wayland-* in the runtime
        self.env, self.files = {}, {}
        # The build's own programs may need LD_LIBRARY_PATH (meson test sets it); an installed
        # compositor must not get it: under a sanitizer it names an instrumented libwayland.
        self.installed = False

    def argv(self, runtime, width, height):
        raise NotImplementedError


class Reference(Peer):
    def __init__(self, name, build, installed):
        super().__init__(name)
        self.plugin = not name.endswith("-stock")
        self.bin = os.path.join(build, "hosts", "compositor", "pixelport-compositor") if build else None
        if not (self.bin and os.access(self.bin, os.X_OK)):
            self.bin = installed("pixelport-compositor")
        if not self.bin:
            self.reason = "no pixelport-compositor (not built, not installed)"
            return
        v = version_of([self.bin, "--version"])
        self.label = f"pixelport-compositor {v}".strip() + (" + plugin" if self.plugin else " stock (--no-plugin)")

    def argv(self, runtime, width, height):
        a = [self.bin, "--socket", SOCKET, "--output", f"{width}x{height}@60", "--log-level", "error"]
        # The video workload sends NV12 wherever it is advertised (Weston too): the plugin's
        # default withholds 4:2:0 from GStreamer's clients (docs/design.md), not here.
        return a + ["--gstreamer-withhold", "none"] if self.plugin else a + ["--no-plugin"]


class Wlroots(Peer):
    """sway, labwc, cage: stock, or with the preload module (as tests/compositors starts them)."""

    def __init__(self, name, build, prefix, preload):
        super().__init__(name)
        self.host = name.split("-")[0]
        self.plugin = not name.endswith("-stock")
        self.named_socket = False
        self.build = build
        self.bin = os.path.join(prefix, "bin", self.host) if prefix else None
        if not (self.bin and os.access(self.bin, os.X_OK)):
            self.reason = (f"no {self.host} built (scripts/test builds it from ../shared/sources; "
                           "PIXELPORT_HOSTS_PREFIX=/usr takes the system's)")
            return
        if self.plugin and not preload:
            self.reason = "no libpixelport-preload.so (not built, not installed)"
            return
        if self.host == "cage" and not (build and os.access(self.paint(), os.X_OK)) and not shutil.which("pixelport-paint"):
            self.reason = "cage needs an application: no pixelport-paint"
            return
        lib = os.path.join(prefix, "lib")
        self.env = {"WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_HEADLESS_OUTPUTS": "1",
                    "WLR_LIBINPUT_NO_DEVICES": "1"}
        if glob.glob(os.path.join(lib, "libwlroots*")):
            self.env["LD_LIBRARY_PATH"] = lib
        if self.plugin:
            self.env["LD_PRELOAD"] = preload
            self.env["PIXELPORT_GSTREAMER_WITHHOLD"] = "none"  # as Reference.argv
        v = version_of([self.bin, "-v" if self.host == "cage" else "--version"], dict(os.environ, **self.env))
        self.label = f"{self.host} {v}".strip() + (" + pixelport (LD_PRELOAD)" if self.plugin else " stock")

    def paint(self):
        return os.path.join(self.build, "client-demo", "pixelport-paint") if self.build else ""

    def argv(self, runtime, width, height):
        cfg = os.path.join(runtime, "config")
        os.makedirs(cfg, exist_ok=True)
        if self.host == "sway":
            # As tests/compositors: windows floating at the origin, no borders; the output at the video's size.
            with open(os.path.join(cfg, "sway.conf"), "w") as f:
                f.write("default_border none\ndefault_floating_border none\nfloating_minimum_size 1 x 1\n"
                        'for_window [app_id=".*"] floating enable, move absolute position 0 0\n'
                        f"output * mode {width}x{height}\n")
            return [self.bin, "-c", os.path.join(cfg, "sway.conf")]
        if self.host == "labwc":
            os.makedirs(os.path.join(cfg, "labwc"), exist_ok=True)
            with open(os.path.join(cfg, "labwc", "rc.xml"), "w") as f:
                f.write('<labwc_config><windowRules><windowRule identifier="*" serverDecoration="no">'
                        '<action name="MoveTo" x="0" y="0"/></windowRule></windowRules></labwc_config>\n')
            return [self.bin, "-C", os.path.join(cfg, "labwc")]
        paint = self.paint() if os.access(self.paint(), os.X_OK) else shutil.which("pixelport-paint")
        return [self.bin, "--", paint, "--format", "XRGB8888", "--size", "8x8", "--seed", "99"]


class Weston(Peer):
    def __init__(self, name):
        super().__init__(name)
        self.installed = True
        self.renderer = name.split("-")[1]
        self.bin = shutil.which("weston")
        if not self.bin:
            self.reason = "not installed (apt-get install weston)"
            return
        v = version_of([self.bin, "--version"])
        self.major = int(v.split(".")[0]) if v else 0
        self.gl = self.renderer == "gl"
        self.label = f"Weston {v} {'GL' if self.gl else 'pixman'}"
        if self.gl and software_gl():
            self.label += " (llvmpipe)"
            self.notes.append("GL on llvmpipe: its shaders run on the CPU (no GPU here)")

    def argv(self, runtime, width, height):
        # Weston 12 renamed the options; before it, the headless backend renders nothing unless told.
        if self.major >= 12:
            how = ["--backend=headless", f"--renderer={self.renderer}"]
        else:
            how = ["--backend=headless-backend.so", "--use-gl" if self.gl else "--use-pixman"]
        return [self.bin, *how, f"--socket={SOCKET}", f"--width={width}", f"--height={height}", "--idle-time=0"]


class Mutter(Peer):
    def __init__(self, name):
        super().__init__(name)
        self.installed = True
        self.bin = shutil.which("mutter")
        self.bus, self.gl = True, True
        if not self.bin:
            self.reason = "not installed (apt-get install mutter dbus)"
            return
        if not shutil.which("dbus-daemon"):
            self.reason = "no dbus-daemon for its private session bus (apt-get install dbus)"
            return
        self.label = f"Mutter {version_of([self.bin, '--version'])}"
        if software_gl():
            self.label += " (llvmpipe)"
            self.notes.append("GL on llvmpipe: its shaders run on the CPU (no GPU here)")

    def argv(self, runtime, width, height):
        return [self.bin, "--headless", "--wayland", "--no-x11", f"--wayland-display={SOCKET}",
                "--virtual-monitor", f"{width}x{height}"]


class KWin(Peer):
    def __init__(self, name):
        super().__init__(name)
        self.installed = True
        self.bin = shutil.which("kwin_wayland")
        self.bus, self.gl = True, True
        if not self.bin:
            self.reason = "not installed (apt-get install kwin-wayland)"
            return
        self.bin = runnable(self.bin, self.notes)
        if not shutil.which("dbus-daemon"):
            self.reason = "no dbus-daemon for its private session bus (apt-get install dbus)"
            return
        self.label = f"KWin {version_of([self.bin, '--version'])}"
        if software_gl():
            self.label += " (llvmpipe)"
            self.notes.append("GL on llvmpipe: its shaders run on the CPU (no GPU here)")

    def argv(self, runtime, width, height):
        return [self.bin, "--virtual", f"--socket={SOCKET}", f"--width={width}", f"--height={height}"]


def make_peers(names, build, prefix):
    def installed(program):
        return shutil.which(program)

    preload = os.path.join(build, "hosts", "preload", "libpixelport-preload.so") if build else ""
    if not os.path.exists(preload):
        preload = next(iter(glob.glob("/usr/lib/*/libpixelport-preload.so") +
                            glob.glob("/usr/local/lib/*/libpixelport-preload.so")), "")
    peers = []
    for n in names:
        if n.startswith("reference"):
            peers.append(Reference(n, build, installed))
        elif n.split("-")[0] in ("sway", "labwc", "cage"):
            peers.append(Wlroots(n, build, prefix, preload))
        elif n.startswith("weston"):
            peers.append(Weston(n))
        elif n == "mutter":
            peers.append(Mutter(n))
        elif n == "kwin":
            peers.append(KWin(n))
    return peers


def wayland_socket(runtime, name):
    """The name of a socket in runtime that accepts a connection (name, else any wayland-*)."""
    names = [name] if name else sorted(n for n in os.listdir(runtime) if n.startswith("wayland-")
                                       and not n.endswith(".lock"))
    for n in names:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(os.path.join(runtime, n))
            return n
        except OSError:
            continue
        finally:
            s.close()
    return None


def has_file_caps(path):
    try:
        return bool(os.getxattr(path, "security.capability"))
    except OSError:
        return False


copies = None


def runnable(path, notes):
    """`path`, or a copy of it without its file capabilities where this environment refuses them
    (a container's capability bounding set: exec fails with EPERM, kwin_wayland's
    cap_sys_resource); the program then does without what they would raise. Noted in `notes`."""
    try:
        subprocess.run([path, "--version"], capture_output=True, timeout=30)
        return path
    except PermissionError:
        if not has_file_caps(path):
            return path
    except (OSError, subprocess.TimeoutExpired):
        return path
    global copies
    if copies is None:
        copies = tempfile.mkdtemp(prefix="pixelport-cmp-bin-")
        atexit.register(shutil.rmtree, copies, True)
    copy = os.path.join(copies, os.path.basename(path))
    shutil.copyfile(path, copy)  # not copy2: that would copy the capabilities too
    os.chmod(copy, 0o755)
    notes.append(f"ran from a copy of {path} without its file capabilities "
                 "(this environment's capability bounding set refuses them)")
    return copy


class Running:
    """A started compositor: its process, private runtime and bus; stop() ends them by pid."""

    def __init__(self, peer, width, height, logfile):
        self.peer, self.proc, self.bus_pid, self.socket = peer, None, None, None
        self.runtime = tempfile.mkdtemp(prefix="pixelport-cmp-")
        os.chmod(self.runtime, 0o700)
        self.log = open(logfile, "ab")
        env = {k: v for k, v in os.environ.items()
               if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DISPLAY", "LD_PRELOAD", "DBUS_SESSION_BUS_ADDRESS")}
        env.update(XDG_RUNTIME_DIR=self.runtime, HOME=self.runtime, XDG_CONFIG_HOME=os.path.join(self.runtime, "config"))
        os.makedirs(env["XDG_CONFIG_HOME"], exist_ok=True)
        # Clients (GStreamer, wayland-info, the build's own, which find their libraries by their
        # runpath) run as a user runs them, as tests/integration's harness runs them.
        self.client_env = {k: v for k, v in env.items() if k != "LD_LIBRARY_PATH"}
        if peer.installed:
            env.pop("LD_LIBRARY_PATH", None)
        if peer.bus:
            bus = os.path.join(self.runtime, "bus")
            out = subprocess.run(["dbus-daemon", "--session", f"--address=unix:path={bus}", "--fork", "--print-pid"],
                                 capture_output=True, text=True, env=env)
            if out.returncode == 0 and out.stdout.strip().isdigit():
                self.bus_pid = int(out.stdout.strip())
            env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"
        env.update(peer.env)
        self.start_error = None
        argv = peer.argv(self.runtime, width, height)
        try:
            self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                         start_new_session=True)
        except OSError as e:
            self.start_error = f"cannot run {argv[0]}: {e.strerror}"

    def wait_ready(self, timeout=30):
        """The socket's name once it accepts connections; None if the compositor exited or never listened."""
        end = time.monotonic() + timeout
        while self.proc is not None and time.monotonic() < end:
            if self.proc.poll() is not None:
                return None
            self.socket = wayland_socket(self.runtime, SOCKET if self.peer.named_socket else None)
            if self.socket:
                self.client_env["WAYLAND_DISPLAY"] = self.socket
                # cage: its application's window first, so that ours stack above it.
                time.sleep(0.3 if isinstance(self.peer, Wlroots) and self.peer.host == "cage" else 0)
                return self.socket
            time.sleep(0.02)
        return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM (as a session manager sends), 10 s, then SIGKILL; the same for its bus."""
        for pid, proc in ((self.proc.pid if self.proc else None, self.proc), (self.bus_pid, None)):
            if not pid:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            end = time.monotonic() + 10
            while time.monotonic() < end:
                if proc is not None and proc.poll() is not None:
                    break
                if proc is None:
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        break
                time.sleep(0.02)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        status = self.proc.wait() if self.proc else None
        # What it started (Weston's shell clients, cage's application) is in its session: ended too.
        try:
            if self.proc:
                os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.log.close()
        shutil.rmtree(self.runtime, ignore_errors=True)
        return status


def wayland_info(env):
    """wl_shm formats, the output's current mode and a few globals, from wayland-info."""
    if not shutil.which("wayland-info"):
        return {}
    try:
        text = subprocess.run(["wayland-info"], env=env, capture_output=True, text=True, timeout=10).stdout
    except subprocess.TimeoutExpired:
        return {}
    info = {"shm_formats": [], "globals": re.findall(r"interface: '(\w+)'", text)}
    shm = re.search(r"interface: 'wl_shm'.*?(?=interface: |\Z)", text, re.S)
    if shm:
        info["shm_formats"] = re.findall(r"= '(\w+)'", shm.group(0))
    m = re.search(r"width: (\d+) px, height: (\d+) px, refresh: ([\d.]+) Hz", text)
    if m:
        hz = float(m.group(3))  # 0 where the compositor does not say (wlroots' headless default)
        info["output"] = f"{m.group(1)}x{m.group(2)}" + (f"@{hz:.0f}" if hz else "")
    return info


def frame_path(peer, info):
    """How an NV12 frame gets to the screen: (convert_to for the client or None, words for the row)."""
    if "NV12" not in info.get("shm_formats", []):
        return "BGRx", "client converts to BGRx (videoconvert)"
    if "pp_stream_manager_v1" in info.get("globals", []):
        return None, "NV12 over wl_shm, converted by the plugin"
    if peer.gl:
        return None, "NV12 over wl_shm, converted in a GL shader"
    return None, "NV12 over wl_shm"


def run_sweep(args, running, outdir, formats, width, height):
    argv = [args.sweep, "-o", outdir, "--transports", "shm", "--formats", ",".join(formats),
            "--sizes", f"{width}x{height}", "--warmup", "2", "--frames", str(args.present_frames),
            "--min-frames", str(args.present_frames), "--point-seconds", "0", "--confirm-rounds", "0",
            "--timeout-ms", "5000", "--pattern", "--no-plot", "--no-verify",
            "--compositor-pid", str(running.proc.pid)]
    os.makedirs(os.path.dirname(outdir), exist_ok=True)
    env = {k: v for k, v in running.client_env.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    with open(outdir + ".txt", "w") as out:
        r = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=300)
    if r.returncode != 0 or not os.path.exists(os.path.join(outdir, "sweep.json")):
        raise videoplay.PlayError(f"pixelport-sweep failed ({r.returncode}); see {outdir}.txt")
    with open(os.path.join(outdir, "sweep.json")) as f:
        j = json.load(f)
    order = j.get("sample_phases", [])

    def values(p, phase):
        i = order.index(phase)
        return [x[i] for x in p["samples"] if i < len(x) and x[i] is not None and x[i] >= 0]

    points = {}
    for p in j["points"]:
        # convert and upload: the compositor's own phases, where the plugin reports them (timing protocol).
        points[p["format"]] = {"note": p.get("note"), **{f"{ph}_ns": values(p, ph) for ph in PRESENT_PHASES}}
    return points


def run_pacing(client, running, logpath):
    """The FIFO client's frames and, with commit-timing, its timed commits: a dict for the row."""
    env = {k: v for k, v in running.client_env.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    r = subprocess.run([client, "fifo", "XRGB8888", "shm", "60", "256x192", "0", "auto"], env=env,
                       capture_output=True, text=True, timeout=120)
    with open(logpath, "a") as log_file:
        log_file.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise videoplay.PlayError(f"pixelport-pacing-client failed ({r.returncode}); see {logpath}")
    how, frames, refresh = "", [], 0
    for line in r.stdout.splitlines():
        w = line.split()
        if w[:1] == ["pacing"]:
            how = w[1]
        elif w[:1] == ["frame"] and len(w) >= 3:
            frames.append(int(w[3]) if w[2] == "presented" else None)
            refresh = refresh or (int(w[4]) if w[2] == "presented" and len(w) > 4 else 0)
    shown = [t for t in frames if t is not None]
    gaps = [b - a for a, b in zip(shown, shown[1:])]
    out = {"how": how, "frames": len(frames), "shown": len(shown), "intervals_ns": gaps,
           "refresh_ns": refresh, "target_error_ns": None}
    t = subprocess.run([client, "timed", "12"], env=env, capture_output=True, text=True, timeout=120)
    if t.returncode == 0:
        errs = []
        for line in t.stdout.splitlines():
            m = re.match(r"timed \d+ target (\d+) present (\d+) refresh (\d+)", line)
            if m:
                errs.append(int(m.group(2)) - int(m.group(1)))
                out["refresh_ns"] = out["refresh_ns"] or int(m.group(3))
        out["target_error_ns"] = errs
    return out


def main():
    ap = argparse.ArgumentParser(prog=os.path.basename(sys.argv[0]), description="The same video and presentation workloads in several compositors, side by side.",
                                 epilog="pixelport-compositors(1) says how to read the answer.")
    ap.add_argument("--out", help="the folder for the report, the plots and each compositor's log "
                    "(default: pixelport-compositors-DATE-TIME here)")
    ap.add_argument("--compositors", default="", help="comma-separated names (default: every one): " + ", ".join(NAMES))
    ap.add_argument("--quick", action="store_true", help="1080p60 only, fewer frames, 2 rounds")
    ap.add_argument("--build", default="", help="a pixelport build directory (else the installed programs)")
    ap.add_argument("--rounds", type=int, default=0, help="rounds per compositor (default 3, --quick 2)")
    ap.add_argument("--seconds", type=float, default=0, help="seconds of video per play")
    ap.add_argument("--machine", default="", help="how the report names this machine")
    ap.add_argument("--check-names", metavar="LIST", help=argparse.SUPPRESS)  # scripts/demo's check
    args = ap.parse_args()
    names = [n.strip() for n in (args.check_names if args.check_names is not None else args.compositors).split(",")
             if n.strip()] or list(NAMES)
    bad = [n for n in names if n not in NAMES]
    if bad:
        print(f"scripts/demo: unknown compositor '{bad[0]}' (known: {', '.join(NAMES)})", file=sys.stderr)
        return 2
    if args.check_names is not None:
        return 0
    if args.rounds < 0 or args.seconds < 0:
        ap.error("--rounds and --seconds take a positive number")
    args.out = args.out or time.strftime("pixelport-compositors-%Y%m%d-%H%M%S")
    build = os.path.abspath(args.build) if args.build else ""
    args.rounds = args.rounds or (2 if args.quick else 3)
    seconds = args.seconds or (2 if args.quick else 6)
    args.present_frames = 30 if args.quick else 120
    workloads = [("1080p60", 1920, 1080, 60)] + ([] if args.quick else [("4K30", 3840, 2160, 30)])
    args.sweep = os.path.join(build, "client-demo", "sweep", "pixelport-sweep") if build else ""
    if not os.access(args.sweep, os.X_OK):
        args.sweep = shutil.which("pixelport-sweep") or ""
    probe = os.environ.get("PIXELPORT_PROBE_CLIENT") or (
        os.path.join(build, "tests", "integration", "pixelport-probe-client") if build else "")
    probe = probe if probe and os.access(probe, os.X_OK) else None
    pacer = os.environ.get("PIXELPORT_PACING_CLIENT") or (
        os.path.join(build, "tests", "integration", "pixelport-pacing-client") if build else "")
    pacer = pacer if pacer and os.access(pacer, os.X_OK) else None
    prefix = os.environ.get("PIXELPORT_HOSTS_PREFIX", "")
    if not prefix and build:
        prefix = next(iter(sorted(glob.glob(os.path.join(build, "compositors", "wlr-*", "prefix")))), "")
    if not prefix and not build:
        prefix = "/usr"  # installed: the distribution's sway, labwc and cage
    os.makedirs(args.out, exist_ok=True)

    video_missing = None
    if not shutil.which("gst-launch-1.0"):
        video_missing = "GStreamer is not installed (apt-get install gstreamer1.0-tools gstreamer1.0-plugins-bad)"
    elif subprocess.run(["gst-inspect-1.0", "waylandsink"], capture_output=True,
                        env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}).returncode != 0:
        video_missing = "no waylandsink (apt-get install gstreamer1.0-plugins-bad)"
    if video_missing:
        log(f"compositors: video skipped: {video_missing}")

    peers = make_peers(names, build, prefix)
    results = {"machine": args.machine, "quick": args.quick, "rounds": args.rounds, "seconds": seconds,
               "video_missing": video_missing, "probe": os.path.basename(probe) if probe else None,
               "pacing_client": os.path.basename(pacer) if pacer else None,
               "workloads": [{"name": w[0], "width": w[1], "height": w[2], "rate": w[3]} for w in workloads],
               "compositors": []}
    state = {}
    for p in peers:
        row = {"name": p.name, "label": p.label, "notes": p.notes, "status": "ok" if not p.reason else "unavailable",
               "reason": p.reason, "video": {w[0]: [] for w in workloads}, "present": {}, "pacing": [], "info": {},
               "errors": []}
        results["compositors"].append(row)
        state[p.name] = row
        if p.reason:
            log(f"compositors: {p.name}: {p.reason}")
    live = [p for p in peers if not p.reason]
    for rnd in range(args.rounds):
        order = live if rnd % 2 == 0 else list(reversed(live))
        for p in order:
            row = state[p.name]
            if row["status"] != "ok":
                continue
            for wname, width, height, rate in workloads:
                log(f"compositors: round {rnd + 1}/{args.rounds}, {p.label}, {wname}")
                logfile = os.path.join(args.out, f"{p.name}.log")
                running = Running(p, width, height, logfile)
                try:
                    if not running.wait_ready():
                        why = running.start_error or (
                            "exited at start" if not running.alive() else "no Wayland socket within 30 s")
                        if rnd == 0 and not any(row["video"].values()):
                            row["status"], row["reason"] = "unavailable", f"did not start: {why} (see {p.name}.log)"
                        else:
                            row["status"], row["reason"] = "error", f"did not start in round {rnd + 1}: {why}"
                        break
                    info = dict(wayland_info(running.client_env), asked=f"{width}x{height}")
                    row["info"].setdefault(wname, info)
                    if not video_missing:
                        convert_to, how = frame_path(p, info)
                        row.setdefault("how", {})[wname] = how
                        frames = int(seconds * rate)
                        argv = videoplay.pipeline(width, height, rate, frames, convert_to)
                        r = videoplay.play(argv, running.client_env, running.proc.pid, frames, rate, probe)
                        row["video"][wname].append(r)
                    if wname == workloads[0][0] and args.sweep:
                        fmts = ["XRGB8888"] + (["NV12"] if "NV12" in info.get("shm_formats", []) else [])
                        pts = run_sweep(args, running, os.path.join(args.out, "sweep", f"{p.name}-{rnd + 1}"),
                                        fmts, width, height)
                        for fmt, pt in pts.items():
                            acc = row["present"].setdefault(fmt, {"note": None})
                            for ph in PRESENT_PHASES:
                                acc[ph + "_ns"] = acc.get(ph + "_ns", []) + pt[ph + "_ns"]
                            acc["note"] = acc["note"] or pt["note"]
                    if wname == workloads[0][0] and pacer:
                        row["pacing"].append(run_pacing(pacer, running, logfile))
                    if not running.alive():
                        raise videoplay.PlayError(f"exited during {wname} (status {running.proc.returncode})")
                except (videoplay.PlayError, subprocess.TimeoutExpired, OSError) as e:
                    row["status"] = "error"
                    row["reason"] = f"{wname}, round {rnd + 1}: {e}"
                    if not running.alive():  # the client's failure follows from it
                        row["reason"] = (f"{wname}, round {rnd + 1}: the compositor exited "
                                         f"(status {running.proc.returncode}; see {p.name}.log)")
                    log(f"compositors: {p.name}: ERROR {row['reason']}")
                finally:
                    running.stop()
                if row["status"] != "ok":
                    break
    for row in results["compositors"]:
        if row["status"] == "ok" and not any(row["video"].values()) and not any(
                v["latency_ns"] or v["submit_ns"] for v in row["present"].values()):
            row["status"], row["reason"] = "error", "started but gave no numbers"
    with open(os.path.join(args.out, "compositors.json"), "w") as f:
        json.dump(results, f, indent=1)
    text = compositors_report.write(results, args.out)
    print(text, end="")
    return 1 if any(r["status"] == "error" for r in results["compositors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
