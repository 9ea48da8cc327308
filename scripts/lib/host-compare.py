#!/usr/bin/env python3
"""The plugin-vs-stock comparison of `scripts/demo --host`: two pixelport-sweep runs with the
same options inside one compositor, one with the plugin and one stock.

    host-compare.py --host LABEL --plugin SWEEP_DIR --stock SWEEP_DIR [--timing-log JSONL] --out PREFIX

What both runs can report is what a client sees: its own submit time and, where the compositor
has wp_presentation, the time from its commit to the presentation of that frame. The compositor's
phases (transfer, convert, upload, present, its output frames' render time) come from the plugin
(pixelport-timing-v1 and its log), so only the plugin run has them; a stock compositor shows
nothing of its upload or render to the outside. Points that only the plugin can run (formats it
converts, the stream) are listed with the stock run's reason. Writes PREFIX.txt (what it prints),
PREFIX.csv and PREFIX.json; exits 1 when no point was measured in both runs.
"""
import argparse
import csv
import json
import random
import sys

from ratios import TIE, clear, geomean, median, pct, ratio_interval

# Index of each phase in a sample (pixelport-sweep's "sample_phases"; checked against the file).
PHASES = ["fill", "submit", "transfer", "convert", "upload", "present", "latency", "cost"]
RESAMPLES = 2000


def dur(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs" if ns < 1e5 else f"{ns / 1e3:.0f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms" if ns < 1e7 else f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def human_bytes(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.0f} {unit}" if b == int(b) else f"{b:.1f} {unit}"
        b /= 1024


def load(sweep_dir):
    with open(f"{sweep_dir}/sweep.json") as f:
        j = json.load(f)
    order = j.get("sample_phases", PHASES)
    points = {}
    for p in j["points"]:
        values = {ph: [s[i] for s in p["samples"] if i < len(s) and s[i] is not None] for i, ph in enumerate(order)}
        key = (p["format"], p["transport"], p["width"], p["height"])
        points[key] = {"bytes": p["bytes"], "note": p["note"], "valid": p.get("valid", True), "values": values,
                       "frames": len(p["samples"]), "pixels": (p.get("pixels") or {}).get("status")}
    return j, points


def ratio_text(r, lo, hi):
    if r is None:
        return "-"
    sure = "" if clear(lo, hi) else " ~"
    return f"{r:.2f}x [{lo:.2f}-{hi:.2f}]{sure}"


def frame_records(path):
    """Output frames of the plugin's timing log: render times, intervals, missed vblanks."""
    render, present, missed, n = [], [], 0, 0
    try:
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("type") != "frame":
                    continue
                n += 1
                if r.get("t_render_start") is not None and r.get("t_render_end") is not None \
                        and r["t_render_end"] >= r["t_render_start"]:
                    render.append(r["t_render_end"] - r["t_render_start"])
                if r.get("t_present") is not None:
                    present.append(r["t_present"])
                missed += 1 if r.get("missed") else 0
    except OSError:
        return None
    present.sort()
    gaps = [b - a for a, b in zip(present, present[1:]) if b > a]
    return {"frames": n, "render_p50_ns": median(render), "render_p95_ns": pct(render, 0.95),
            "render_max_ns": max(render) if render else None, "interval_p50_ns": median(gaps), "missed": missed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True, help="label, e.g. 'sway 1.10.1 on wlroots 0.18.2'")
    ap.add_argument("--name", default=None, help="short name of the host for sentences (default: first word)")
    ap.add_argument("--plugin", required=True, help="pixelport-sweep output folder of the run with the plugin")
    ap.add_argument("--stock", required=True, help="pixelport-sweep output folder of the stock run")
    ap.add_argument("--plugin-how", default="", help="how the plugin was loaded, for the header")
    ap.add_argument("--stock-how", default="", help="what stock means for this host, for the header")
    ap.add_argument("--timing-log", help="the plugin run's compositor timing log (JSON Lines)")
    ap.add_argument("--out", required=True, help="PREFIX of PREFIX.txt, .csv, .json")
    a = ap.parse_args()
    name = a.name or a.host.split()[0]
    rng = random.Random(1)

    jp, plugin = load(a.plugin)
    js, stock = load(a.stock)
    order = {t: i for i, t in enumerate((jp.get("meta") or {}).get("transports") or [])}
    fmts = {f: i for i, f in enumerate((jp.get("meta") or {}).get("formats") or [])}
    group_order = lambda g: (order.get(g[0][1], 99), fmts.get(g[0][0], 99), g[0])
    lines = []
    say = lines.append

    def has(points, phase):
        return any(p["values"][phase] for p in points.values())

    presentation = has(plugin, "latency") and has(stock, "latency")
    say(f"{a.host}, headless (pixman): the same sweep with the plugin"
        + (f" ({a.plugin_how})" if a.plugin_how else "") + " and stock" + (f" ({a.stock_how})" if a.stock_how else "")
        + ", one run each")
    say("   ratio = plugin / stock of the medians (below 1: faster with the plugin), [a-b] its 95% bootstrap")
    say("   interval over this run's frames, '~' where that reaches within 2% of 1 (no difference shown); one")
    say("   run each on a shared machine, so the run-to-run spread is not in the interval: read it as a hint")

    def pixel_counts(points):
        c = {}
        for p in points.values():
            if p["frames"]:
                st = p["pixels"] or "not checked"
                c[st] = c.get(st, 0) + 1
        return ", ".join(f"{n} {st}" for st, n in sorted(c.items())) or "none measured"
    say(f"   pixels on screen after each point (the sweep's check): with the plugin {pixel_counts(plugin)}; "
        f"stock {pixel_counts(stock)}")

    common = sorted((k for k in plugin if k in stock and plugin[k]["frames"] and stock[k]["frames"]),
                    key=lambda k: (fmts.get(k[0], 99), plugin[k]["bytes"], order.get(k[1], 99)))
    rows = []
    for k in common:
        p, s = plugin[k], stock[k]
        row = {"format": k[0], "transport": k[1], "width": k[2], "height": k[3], "bytes": p["bytes"],
               "frames_plugin": p["frames"], "frames_stock": s["frames"],
               "pixels_plugin": p["pixels"], "pixels_stock": s["pixels"]}
        for ph in ("latency", "submit"):
            r, lo, hi = ratio_interval(p["values"][ph], s["values"][ph], rng, RESAMPLES)
            row[ph] = {"plugin_ns": median(p["values"][ph]), "stock_ns": median(s["values"][ph]),
                       "ratio": r, "low": lo, "high": hi}
        for ph in ("upload", "convert", "present"):
            row["plugin_" + ph + "_ns"] = median(p["values"][ph])
        rows.append(row)

    say("")
    say("1. What both runs report (the client's view of the compositor)")
    if not presentation:
        say(f"   {name} has no wp_presentation: a client sees no presentation time there (frame callbacks")
        say("   carry none), so only the client's submit time compares; the plugin's own phases are in 3.")
    lat_w = 44 if presentation else 0
    say(f"   {'point':<28}{'frames':>6}   {'commit to presented' if presentation else '':<{lat_w}}submit (client)")
    for r in rows:
        label = f"{r['format']} {r['transport']} {human_bytes(r['bytes'])}"
        frames = f"{r['frames_plugin']}|{r['frames_stock']}"
        lat = r["latency"]
        lat_text = (f"{dur(lat['plugin_ns'])} | {dur(lat['stock_ns'])} | {ratio_text(lat['ratio'], lat['low'], lat['high'])}"
                    if presentation else "")
        sub = r["submit"]
        flag = ""
        if r["pixels_plugin"] == "wrong" or r["pixels_stock"] == "wrong":
            flag = "  WRONG PIXELS (" + ", ".join(n for n, st in (("plugin", r["pixels_plugin"]), ("stock", r["pixels_stock"]))
                                                  if st == "wrong") + ")"
        say(f"   {label:<28}{frames:>6}   {lat_text:<{lat_w}}{dur(sub['plugin_ns'])} | {dur(sub['stock_ns'])} | "
            f"{ratio_text(sub['ratio'], sub['low'], sub['high'])}{flag}")
    summary = {}
    for ph in ("latency", "submit"):
        rs = [r[ph]["ratio"] for r in rows if r[ph]["ratio"]]
        if rs:
            n = sum(1 for r in rows if r[ph]["ratio"] and clear(r[ph]["low"], r[ph]["high"]))
            summary[ph] = {"geomean": geomean(rs), "min": min(rs), "max": max(rs), "points": len(rs),
                           "clear": n}
    if not rows:
        say("   none: no point was measured in both runs")
    for ph, title in (("latency", "commit to presented"), ("submit", "submit")):
        if ph in summary:
            s = summary[ph]
            say(f"   {title} over {s['points']} point(s): {s['geomean']:.2f}x (geometric mean; {s['min']:.2f}x to "
                f"{s['max']:.2f}x; {s['clear']} point(s) whose interval lies more than 2% from 1)")
    if presentation:
        say("   commit to presented includes the wait for the output's next refresh (60 Hz: up to 16.7 ms), so")
        say("   it grows only when the compositor's work on a frame makes it miss a refresh. submit is mostly the")
        say("   client's own copy into the buffer (and any wait for a buffer the compositor still holds).")
    else:
        say("   submit is mostly the client's own copy into the buffer (and any wait for a buffer the compositor")
        say("   still holds).")
    mem = {}
    for run, j in (("plugin", jp), ("stock", js)):
        m = (j.get("meta") or {}).get("compositor_memory") or {}
        mem[run] = m
    if mem["plugin"].get("rss_before") and mem["stock"].get("rss_before"):
        mib = lambda b: f"{b / 2**20:.1f} MiB"
        say(f"   compositor RSS when the sweep connected: {mib(mem['plugin']['rss_before'])} with the plugin, "
            f"{mib(mem['stock']['rss_before'])} stock (peak afterwards: {mib(mem['plugin'].get('vmhwm_after', 0))} | "
            f"{mib(mem['stock'].get('vmhwm_after', 0))}; the plugin run ran more points)")

    say("")
    say(f"2. What only the plugin can run (stock {name} rejects it)")
    only = [k for k in plugin if plugin[k]["frames"] and not (k in stock and stock[k]["frames"])]
    groups = {}
    for k in only:
        why = stock[k]["note"] if k in stock and stock[k]["note"] else "not run stock"
        groups.setdefault((k[0], k[1]), []).append((plugin[k]["bytes"], k, why))
    only_rows = []
    if not groups:
        say("   nothing: every point the plugin ran, stock ran too")
    for (fmt, transport), pts in sorted(groups.items(), key=group_order):
        pts.sort()
        costs = [median(plugin[k]["values"]["cost"]) for _, k, _ in pts]
        whys = sorted({w for _, _, w in pts})
        wrong = sum(1 for _, k, _ in pts if plugin[k]["pixels"] == "wrong")
        say(f"   {fmt} {transport}, {len(pts)} size(s): median cost with the plugin {dur(costs[0])} at "
            f"{human_bytes(pts[0][0])}" + (f" to {dur(costs[-1])} at {human_bytes(pts[-1][0])}" if len(pts) > 1 else "")
            + f"; stock: {'; '.join(whys)}" + (f"; WRONG PIXELS at {wrong} size(s)" if wrong else ""))
        for (b, k, why), c in zip(pts, costs):
            only_rows.append({"format": fmt, "transport": transport, "width": k[2], "height": k[3], "bytes": b,
                              "plugin_cost_ns": c, "plugin_upload_ns": median(plugin[k]["values"]["upload"]),
                              "plugin_convert_ns": median(plugin[k]["values"]["convert"]),
                              "plugin_transfer_ns": median(plugin[k]["values"]["transfer"]), "stock_note": why})
    not_run = [k for k in plugin if not plugin[k]["frames"]]
    for k in not_run:
        say(f"   (not measured with the plugin either: {k[0]} {k[1]} {k[2]}x{k[3]}: {plugin[k]['note']})")

    say("")
    say("3. What only the plugin can report (pixelport-timing-v1 and the compositor's timing log)")
    if has(plugin, "upload"):
        say("   the compositor's phases per frame, medians over the sizes of each group (upload, convert, transfer,")
        say("   and present = commit to on screen as the compositor saw it); stock has none of them:")
        by = {}
        for k, p in plugin.items():
            if p["frames"]:
                by.setdefault((k[0], k[1]), []).append(p)
        for (fmt, transport), ps in sorted(by.items(), key=group_order):
            parts = []
            for ph in ("upload", "convert", "transfer", "present"):
                meds = [median(p["values"][ph]) for p in ps if p["values"][ph]]
                if meds:
                    lo, hi = dur(min(meds)), dur(max(meds))
                    parts.append(f"{ph} {lo}" + (f" to {hi}" if hi != lo else ""))
            say(f"   {fmt} {transport}: " + (", ".join(parts) if parts else "-"))
    else:
        say("   none: the plugin run had no timing protocol either (see its sweep-output.txt)")
    frames = frame_records(a.timing_log) if a.timing_log else None
    if frames and frames["frames"]:
        say(f"   output frames in the log: {frames['frames']}, render {dur(frames['render_p50_ns'])} median, "
            f"{dur(frames['render_p95_ns'])} p95, {dur(frames['render_max_ns'])} max; interval "
            f"{dur(frames['interval_p50_ns'])} median; {frames['missed']} missed their refresh")
    elif a.timing_log:
        say(f"   output frames: none in the timing log ({name} did not report presentation to the plugin)")

    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(a.out + ".txt", "w") as f:
        f.write(text)
    with open(a.out + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["format", "transport", "width", "height", "bytes", "frames_plugin", "frames_stock",
                    "latency_plugin_ns", "latency_stock_ns", "latency_ratio", "latency_low", "latency_high",
                    "submit_plugin_ns", "submit_stock_ns", "submit_ratio", "submit_low", "submit_high",
                    "plugin_upload_ns", "plugin_convert_ns", "plugin_present_ns", "stock_note"])
        fix = lambda v: "" if v is None else (f"{v:.4f}" if isinstance(v, float) and v < 100 else f"{v:.0f}"
                                              if isinstance(v, float) else v)
        for r in rows:
            w.writerow([r["format"], r["transport"], r["width"], r["height"], r["bytes"], r["frames_plugin"],
                        r["frames_stock"]] + [fix(r[ph][x]) for ph in ("latency", "submit")
                                              for x in ("plugin_ns", "stock_ns", "ratio", "low", "high")]
                       + [fix(r["plugin_upload_ns"]), fix(r["plugin_convert_ns"]), fix(r["plugin_present_ns"]), ""])
        for r in only_rows:
            w.writerow([r["format"], r["transport"], r["width"], r["height"], r["bytes"], "", 0] + [""] * 10
                       + [fix(r["plugin_upload_ns"]), fix(r["plugin_convert_ns"]), "", r["stock_note"]])
    with open(a.out + ".json", "w") as f:
        json.dump({"host": a.host, "presentation": presentation, "common": rows, "summary": summary,
                   "plugin_only": only_rows, "output_frames": frames, "compositor_memory": mem,
                   "definitions": {"latency": "client's commit until wp_presentation's presented (client clock)",
                                   "submit": "the client's put(): attach, damage, commit (or stream writes)",
                                   "ratio": "plugin median / stock median; low, high: 95% bootstrap interval"}},
                  f, indent=1)
        f.write("\n")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
