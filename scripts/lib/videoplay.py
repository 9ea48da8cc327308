"""One play of a GStreamer waylandsink pipeline in a running compositor, measured from outside:
the CPU of the compositor (/proc/PID/stat) and of the client (its rusage), frames shown and
dropped (fpsdisplaysink), and, while it plays, a second client's roundtrips. Shared by
real-client.py (the plugin against stock) and compositors.py (every compositor).
"""
import os
import queue
import re
import signal
import subprocess
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid, tid=None):
    """utime + stime of a live process (its own threads, not its children), or of one thread."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory(pid):
    """VmRSS and VmHWM of a live process in bytes ({} once it is gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM"):
                    out[key.lower()] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


def read_lines(stream, into, first_shown=None):
    """Puts every line of stream into the queue (None at the end); sets first_shown at the first
    fpsdisplaysink report of a frame rendered."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        into.put(line)
        if first_shown is not None and not first_shown.is_set():
            m = re.search(r"rendered: (\d+)", line)
            if m and int(m.group(1)) > 0:
                first_shown.set()
    into.put(None)


# The percentiles are missing from an older probe's line (no --size either; it ignored arguments).
PROBE_LINE = re.compile(r"^probe roundtrips=(\d+) worst_roundtrip_us=(\d+) frames=(\d+) worst_frame_gap_us=(\d+)"
                        r"(?: p50_roundtrip_us=(\d+) p99_roundtrip_us=(\d+))?")


def probe_line(lines, timeout):
    """The probe's next line from the queue: "probe ready", or its report as a dict; None if none came."""
    end = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=max(0.0, end - time.monotonic()))
        except queue.Empty:
            return None
        if line is None:
            return None
        line = line.strip()
        if line == "probe ready":
            return line
        m = PROBE_LINE.match(line)
        if m:
            keys = ("roundtrips", "worst_roundtrip_us", "frames", "worst_frame_gap_us", "p50_roundtrip_us",
                    "p99_roundtrip_us")
            r = {k: int(v) for k, v in zip(keys, m.groups()) if v is not None}
            if " error=" in line:
                r["error"] = line.split(" error=", 1)[1]
            return r


def pipeline(width, height, rate, frames, convert_to=None):
    """gst-launch-1.0 arguments: NV12 test video into waylandsink, converted first to convert_to
    (e.g. BGRx) in the client when the compositor cannot take NV12; "" lets videoconvert pick
    among the formats the sink is offered (passing NV12 through where it is one)."""
    caps = f"video/x-raw,format=NV12,width={width},height={height},framerate={rate}/1"
    p = ["gst-launch-1.0", "-v", "videotestsrc", "pattern=smpte100", f"num-buffers={frames}", "!", caps]
    if convert_to is not None:
        p += ["!", "videoconvert"] + (["!", f"video/x-raw,format={convert_to}"] if convert_to else [])
    return p + ["!", "fpsdisplaysink", "video-sink=waylandsink", "text-overlay=false", "fps-update-interval=100"]


class PlayError(RuntimeError):
    pass


def play(argv, env, comp_pid, frames, rate, probe=None, probe_size=64):
    """Plays argv (a pipeline()) as a client of the compositor comp_pid, with env naming it.

    Returns rendered, dropped, compositor_s and client_s (CPU seconds over the whole play), and
    for the playing window (first frames shown to the end): window_s, main_thread_s,
    process_window_s, the percentages, probe (the second client's report) and the compositor's
    memory at the end. Raises PlayError when the client fails or the compositor goes away."""
    before = cpu_seconds(comp_pid)
    t0 = os.times()
    client = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + max(60, 4 * frames / rate)
    client_lines, first_shown = queue.Queue(), threading.Event()
    reader = threading.Thread(target=read_lines, args=(client.stdout, client_lines, first_shown), daemon=True)
    reader.start()
    window, probe_report, probe_proc, t1, after, mem = None, None, None, None, None, {}

    def client_ended():  # the client reaped; the probe, if any, not yet (its CPU is not the client's)
        nonlocal t1, after, mem
        if t1 is None:
            t1 = os.times()
            try:
                after = cpu_seconds(comp_pid)
            except OSError:
                raise PlayError("the compositor went away during the video") from None
            mem = memory(comp_pid)

    try:
        # The playing window: from the first frames shown (and the probe ready) until the end.
        while not first_shown.wait(0.01):
            if client.poll() is not None or time.monotonic() > deadline:
                break
        if first_shown.is_set() and client.poll() is None:
            ready = True
            if probe:
                probe_proc = subprocess.Popen([probe, "--size", str(probe_size)], env=env,
                                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                probe_lines = queue.Queue()
                threading.Thread(target=read_lines, args=(probe_proc.stdout, probe_lines), daemon=True).start()
                ready = probe_line(probe_lines, 10) == "probe ready"
                if ready:
                    probe_proc.send_signal(signal.SIGUSR1)  # its start-up figures, left out
            if ready and client.poll() is None:
                w0, m0, p0 = time.monotonic(), cpu_seconds(comp_pid, comp_pid), cpu_seconds(comp_pid)
                if probe_proc is not None and not isinstance(probe_line(probe_lines, 5), dict):
                    raise PlayError("pixelport-probe-client gave no line on SIGUSR1")
                client.wait(timeout=max(1, deadline - time.monotonic()))
                w1, m1 = time.monotonic(), cpu_seconds(comp_pid, comp_pid)
                client_ended()
                window = {"window_s": w1 - w0, "main_thread_s": m1 - m0, "process_window_s": after - p0}
                if probe_proc is not None:
                    probe_proc.send_signal(signal.SIGTERM)
                    probe_report = probe_line(probe_lines, 5)
        client.wait(timeout=max(1, deadline - time.monotonic()))
        client_ended()
    except subprocess.TimeoutExpired:
        raise PlayError(f"the client did not end within {max(60, 4 * frames / rate):.0f} s") from None
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if probe_proc is not None:
            if probe_proc.poll() is None:
                probe_proc.terminate()
            probe_proc.wait(timeout=10)
    reader.join(timeout=10)
    out_lines = []
    while not client_lines.empty():
        line = client_lines.get()
        if line is not None:
            out_lines.append(line)
    text = "".join(out_lines)
    if client.returncode != 0:
        raise PlayError(f"gst-launch-1.0 failed ({client.returncode}): {text[-400:]}")
    # fpsdisplaysink reports every 100 ms: the last report may miss the last frames, so frames
    # shown are those sent less those it reported dropped (QoS: too late to show).
    found = re.findall(r"rendered: (\d+), dropped: (\d+)", text)
    if not found:
        raise PlayError("fpsdisplaysink reported no frame shown: " + text[-300:].strip())
    dropped = int(found[-1][1])
    rendered = frames - dropped
    client_s = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    r = {"rendered": rendered, "dropped": dropped, "compositor_s": after - before, "client_s": client_s}
    if mem:
        r["memory"] = mem
    if window is not None and window["window_s"] > 0:
        r.update(window)
        r["main_thread_pct"] = 100 * window["main_thread_s"] / window["window_s"]
        r["process_pct"] = 100 * window["process_window_s"] / window["window_s"]
        r["other_threads_pct"] = r["process_pct"] - r["main_thread_pct"]
    if isinstance(probe_report, dict):
        r["probe"] = probe_report
    return r
