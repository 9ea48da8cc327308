#!/usr/bin/env python3
"""`scripts/demo --host NAME` for every host this build has, with a one-size sweep: it exits 0,
prints the three parts of the plugin-vs-stock comparison, and writes the result files.

    test_demo_host.py SOURCE_ROOT BUILD_DIR

The comparison's content is checked against what must hold in every host: XRGB8888 over wl_shm
(reused pool and new pool) measured in both runs with submit ratios; NV12 and the stream
measured with the plugin only, each with the stock run's reason; the compositor's upload phase
in the plugin run; wp_presentation times in both runs where the host has wp_presentation (not
tinywl), the same verdict of presentation in both. The timing log has the sweep's commits.

sway, labwc and cage are the compositors suite's builds (PIXELPORT_HOSTS_PREFIX, made by
scripts/test with ../shared/sources): this test never builds them. A host that is absent, and
every preloaded host under a sanitizer build (an instrumented module needs the sanitizer's
runtime first in the host), is skipped with its reason; with PIXELPORT_HOSTS (scripts/test --hosts) sway,
labwc and cage not listed are skipped and a listed one that is absent fails. One line per host in
GoogleTest's format, so that scripts/test's closing line counts passes and skips.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

root, build = sys.argv[1], os.path.abspath(sys.argv[2])
prefix = os.environ.get("PIXELPORT_HOSTS_PREFIX", "")
asked = [h for h in os.environ.get("PIXELPORT_HOSTS", "").split(",") if h]
SWEEP = ["--sizes", "16K", "--formats", "XRGB8888,NV12", "--warmup", "1", "--frames", "4", "--min-frames", "3",
         "--point-seconds", "0.05", "--confirm-rounds", "0", "--timeout-ms", "5000", "--pattern", "--no-plot"]


def sanitized():
    out = subprocess.run(["ldd", os.path.join(build, "hosts", "compositor", "pixelport-compositor")],
                         capture_output=True, text=True).stdout
    return "libasan" in out or "libubsan" in out


def tinywl():
    # meson.build's: the wlroots subproject's, or the bootstrap's wlroots 0.20 prefix's.
    given = os.environ.get("PIXELPORT_TINYWL", "")
    if given and os.access(given, os.X_OK):
        return given
    for d, _, files in os.walk(os.path.join(build, "subprojects")):
        if d.endswith("/tinywl") and "tinywl" in files:
            return os.path.join(d, "tinywl")
    return None


def skip_reason(host):
    if host == "reference":
        return None
    if sanitized():
        return ("a sanitizer build: the demo preloads the (instrumented) module in the normal build only; "
                "test_preload runs tinywl with it here")
    if host == "tinywl":
        return None if tinywl() else "no tinywl (wlroots not built from subprojects/)"
    if asked and host not in asked:
        return f"not asked for (PIXELPORT_HOSTS={','.join(asked)}, scripts/test --hosts)"
    if asked and not os.access(os.path.join(prefix, "bin", host), os.X_OK):
        return None  # asked for: check() fails
    if not prefix or not os.access(os.path.join(prefix, "bin", host), os.X_OK):
        return (f"no {prefix}/bin/{host}: scripts/test builds sway, labwc and cage when the release sources are "
                "present (../shared/sources or --sources DIR)")
    return None


def check(host, results, failures):
    if host in asked and not os.access(os.path.join(prefix, "bin", host), os.X_OK):
        failures.append(f"no {prefix}/bin/{host}, asked for by PIXELPORT_HOSTS={','.join(asked)}")
        return "", ""
    env = dict(os.environ)
    env.pop("WAYLAND_DISPLAY", None)
    r = subprocess.run([os.path.join(root, "scripts", "demo"), "--build", build, "--results", results, "--host", host,
                        "--"] + SWEEP, env=env, capture_output=True, text=True, timeout=240)
    out, err = r.stdout, r.stderr

    def expect(cond, what):
        if not cond:
            failures.append(what)

    expect(r.returncode == 0, f"scripts/demo exited {r.returncode}")
    for part in ("1. What both runs report", "2. What only the plugin can run", "3. What only the plugin can report"):
        expect(part in out, f"no '{part}' in the output")
    dirs = [d for d in os.listdir(results) if d.startswith("demo-") and d.endswith("-" + host)]
    expect(len(dirs) == 1, f"result folders: {dirs}")
    if len(dirs) != 1:
        return out, err
    res = os.path.join(results, dirs[0])
    for f in ("host-compare.txt", "host-compare.csv", "host-compare.json", "verdict.txt", "sweep-output.txt",
              "sweep/sweep.json", "compositor-timing.jsonl", "compositor.log", "stock/sweep/sweep.json",
              "stock/sweep-output.txt", "compare/shm-vs-socket.txt"):
        expect(os.path.isfile(os.path.join(res, f)), f"no {f}")
    try:
        with open(os.path.join(res, "host-compare.json")) as f:
            j = json.load(f)
        with open(os.path.join(res, "host-compare.txt")) as f:
            expect(f.read() in out, "the printed comparison is not host-compare.txt")
    except (OSError, ValueError) as e:
        failures.append(f"host-compare.json: {e}")
        return out, err
    common = {(c["format"], c["transport"]): c for c in j["common"]}
    expect(sorted(common) == [("XRGB8888", "shm"), ("XRGB8888", "shm-new")], f"common points {sorted(common)}")
    presentation = host != "tinywl"
    expect(j["presentation"] == presentation, f"presentation {j['presentation']}, expected {presentation}")
    for key, c in common.items():
        expect(c["frames_plugin"] >= 3 and c["frames_stock"] >= 3, f"{key}: frames {c['frames_plugin']}|{c['frames_stock']}")
        expect(c["submit"]["ratio"] and c["submit"]["low"] <= c["submit"]["ratio"] <= c["submit"]["high"],
               f"{key}: submit ratio {c['submit']}")
        expect(abs(c["submit"]["ratio"] - c["submit"]["plugin_ns"] / c["submit"]["stock_ns"]) < 1e-9,
               f"{key}: the ratio is not plugin / stock")
        if presentation:
            # Presented in both runs, the plugin's within the latency rule against stock's of the
            # same run (tests/integration/latency.hpp: at most max(50 ms, 2x stock)).
            lat = c["latency"]
            expect(lat["plugin_ns"] > 0 and lat["stock_ns"] > 0, f"{key}: commit to presented {lat}")
            expect(lat["plugin_ns"] <= max(50e6, 2 * lat["stock_ns"]),
                   f"{key}: commit to presented, plugin {lat['plugin_ns']} ns, stock {lat['stock_ns']} ns")
        else:
            expect(c["latency"]["ratio"] is None, f"{key}: tinywl has no presentation time: {c['latency']}")
        expect(c["plugin_upload_ns"] is not None, f"{key}: no compositor upload phase with the plugin")
    only = {(o["format"], o["transport"]): o for o in j["plugin_only"]}
    want_only = {("NV12", "shm"): "wl_shm does not advertise NV12", ("NV12", "shm-new"): "wl_shm does not advertise NV12"}
    for fmt in ("XRGB8888", "NV12"):
        for t in ("socket", "pipe"):
            want_only[(fmt, t)] = "no pixelport stream"
    expect(sorted(only) == sorted(want_only), f"plugin-only points {sorted(only)}")
    for key, why in want_only.items():
        if key in only:
            expect(why in only[key]["stock_note"], f"{key}: stock's reason '{only[key]['stock_note']}'")
            expect(only[key]["plugin_cost_ns"] and only[key]["plugin_cost_ns"] > 0, f"{key}: no cost with the plugin")
    nv12 = [o for k, o in only.items() if k[0] == "NV12" and k[1].startswith("shm")]
    expect(all(o["plugin_convert_ns"] for o in nv12), "NV12 over wl_shm without a convert phase")
    expect(j["output_frames"] and j["output_frames"]["frames"] > 0, f"output frames {j['output_frames']}")
    # Every frame the sweep put with the plugin (warm-up included) is in the compositor's log.
    commits = {}
    with open(os.path.join(res, "compositor-timing.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "commit":
                commits[r["title"]] = commits.get(r["title"], 0) + 1
    with open(os.path.join(res, "sweep", "sweep.json")) as f:
        plugin = json.load(f)
    for p in plugin["points"]:
        title = f"pixelport-sweep {p['transport']} {p['format']} {p['width']}x{p['height']}"
        expect(p["frames"] >= 3 and commits.get(title, 0) >= 1 + p["frames"],
               f"{title}: {p['frames']} frames measured, {commits.get(title, 0)} commits in the timing log")
    with open(os.path.join(res, "stock", "sweep", "sweep.json")) as f:
        stock = json.load(f)
    expect(not stock["meta"]["compositor_timing"], "the stock run had the timing protocol")
    expect(not os.path.exists(os.path.join(res, "stock", "compositor-timing.jsonl")), "a stock timing log")
    return out, err


def main():
    failed = 0
    hosts = ["reference", "tinywl", "sway", "labwc", "cage"]
    print(f"[==========] {len(hosts)} tests from DemoHost")
    for host in hosts:
        name = f"DemoHost.{host}"
        print(f"[ RUN      ] {name}", flush=True)
        t0 = time.monotonic()
        why = skip_reason(host)
        if why:
            print(f"skipped: {why}")
            print(f"[  SKIPPED ] {name} (0 ms)", flush=True)
            continue
        failures = []
        results = tempfile.mkdtemp(prefix="pixelport-demo-host-")
        try:
            out, err = check(host, results, failures)
        except subprocess.TimeoutExpired:
            failures.append("scripts/demo took over 240 s")
            out = err = ""
        ms = int((time.monotonic() - t0) * 1000)
        print(out, end="")
        if failures:
            failed += 1
            for f in failures:
                print(f"failure: {f}")
            print(err[-4000:], end="")
            print(f"(results kept in {results})")
            print(f"[  FAILED  ] {name} ({ms} ms)", flush=True)
        else:
            shutil.rmtree(results, ignore_errors=True)
            print(f"[       OK ] {name} ({ms} ms)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
