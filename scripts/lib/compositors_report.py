"""The compositor comparison's answer from its compositors.json (compositors.py writes it): one
verdict sentence per workload with ratios to pixelport, a table, a CSV and gnuplot plots.

    python3 compositors_report.py DIR    (re-reads DIR/compositors.json, rewrites the report)

Ratios are to pixelport-compositor with the plugin ("reference"), or to the first row with the
plugin when that was not run. A ratio is "sure" by the demo's rules: every round puts the same
side ahead by more than 2% (rounds are paired in order) and the rounds' geometric-mean lead is
larger than their spread (max/min of the per-round ratios); commit to presented, measured per
frame, is sure when the 95% bootstrap interval of the ratio of medians lies more than 2% from 1.
"""
import csv
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

from ratios import TIE, clear, geomean, median, pct, ratio_interval


def per_frame_ms(r, key):
    return 1000 * r[key] / r["rendered"] if r.get("rendered") else None


def summarize(row, workload):
    """Medians over the rounds of one compositor's plays of one workload (None if none)."""
    rs = row["video"].get(workload) or []
    if not rs:
        return None
    s = {"rounds": len(rs),
         "compositor_ms": median(per_frame_ms(r, "compositor_s") for r in rs),
         "client_ms": median(per_frame_ms(r, "client_s") for r in rs),
         "totals": [per_frame_ms(r, "compositor_s") + per_frame_ms(r, "client_s") for r in rs if r.get("rendered")],
         "shown": median(r["rendered"] for r in rs), "dropped": median(r["dropped"] for r in rs),
         "process_pct": median(r.get("process_pct") for r in rs),
         "probe_p50_ms": median(r["probe"].get("p50_roundtrip_us", math.nan) / 1000 for r in rs if "probe" in r),
         "probe_p99_ms": median(r["probe"].get("p99_roundtrip_us", math.nan) / 1000 for r in rs if "probe" in r),
         "probe_worst_ms": max((r["probe"]["worst_roundtrip_us"] / 1000 for r in rs if "probe" in r), default=None),
         # Peak RSS (VmHWM): each compositor starts fresh for each workload, so this is its peak
         # through the video; RSS after the client left would miss what it freed then.
         "rss_mib": median(r.get("memory", {}).get("vmhwm", 0) / 2**20 or None for r in rs),
         "how": (row.get("how") or {}).get(workload, "")}
    # An output of another size than the video's (labwc, cage: wlroots' headless default) is said.
    info = (row.get("info") or {}).get(workload, {})
    if info.get("output") and info.get("asked") and info["output"].split("@")[0] != info["asked"]:
        s["how"] += f"; output {info['output']}"
    s["total_ms"] = s["compositor_ms"] + s["client_ms"] if s["compositor_ms"] is not None else None
    for k in ("probe_p50_ms", "probe_p99_ms"):
        if s[k] is not None and math.isnan(s[k]):
            s[k] = None
    return s


def round_ratio(a, b):
    """(ratio of medians, sure, words) of per-round values a (a compositor) against b (pixelport)."""
    ra = [x / y for x, y in zip(a, b) if y]
    if not ra:
        return None, False, ""
    ratio = median(a) / median(b) if median(b) else None
    if len(ra) < 2:
        return ratio, False, "one round: spread unknown"
    g, spread = geomean(ra), max(ra) / min(ra)
    same_side = all(r > 1 + TIE for r in ra) or all(r < 1 - TIE for r in ra)
    lead = g if g >= 1 else 1 / g
    sure = same_side and lead > spread
    return ratio, sure, "sure" if sure else f"within the rounds' spread ({100 * (spread - 1):.0f}%)"


def bootstrap_ratio(a, b, seed=1, n=1000):
    """Ratio of medians a/b and whether its 95% bootstrap interval lies more than 2% from 1."""
    r, lo, hi = ratio_interval(a, b, random.Random(seed), n)
    return r, clear(lo, hi)


def baseline(rows):
    ok = [r for r in rows if r["status"] == "ok"]
    return next((r for r in ok if r["name"] == "reference"), None) or \
        next((r for r in ok if not r["name"].endswith("-stock") and "+" in r["label"]), None)


def ms(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def verdict(results):
    """One sentence per workload (and per measure of it), as a list of lines."""
    rows = results["compositors"]
    base = baseline(rows)
    bname = base["label"] if base else None
    out = []
    for w in results["workloads"]:
        wn = w["name"]
        sums = [(r, summarize(r, wn)) for r in rows if r["status"] == "ok"]
        sums = [(r, s) for r, s in sums if s and s["total_ms"] is not None]
        if not sums:
            if results.get("video_missing"):
                out.append(f"{wn} NV12 video: not measured: {results['video_missing']}")
            continue
        bs = summarize(base, wn) if base else None
        best = min(sums, key=lambda x: x[1]["total_ms"])
        parts = []
        for r, s in sums:
            if base is None or r is base or not bs:
                continue
            ratio, sure, words = round_ratio(s["totals"], bs["totals"])
            parts.append(f"{r['label']} {ratio:.2f}x ({words})" if ratio else f"{r['label']} -")
        text = (f"{wn} NV12 video, CPU per shown frame (compositor + client): least {best[0]['label']} "
                f"({ms(best[1]['total_ms'])} ms = {ms(best[1]['compositor_ms'])} + {ms(best[1]['client_ms'])})")
        if bs:
            text += f"; pixelport ({bname}) {ms(bs['total_ms'])} ms" + ("; others to it: " + ", ".join(parts)
                                                                         if parts else "")
        out.append(text + ".")
        drops = [f"{r['label']} {s['dropped']:.0f}" for r, s in sums if s["dropped"]]
        shown = sums[0][1]["shown"] + sums[0][1]["dropped"]
        out.append(f"   frames dropped (of {shown:.0f} sent, median of the rounds): "
                   + (", ".join(drops) if drops else "none anywhere") + ".")
        probed = [(r, s) for r, s in sums if s["probe_p99_ms"] is not None]
        if probed:
            bestp = min(probed, key=lambda x: x[1]["probe_p99_ms"])
            line = (f"   a second client's roundtrip during the video (p99): shortest {bestp[0]['label']} "
                    f"({ms(bestp[1]['probe_p99_ms'])} ms)")
            if bs and bs["probe_p99_ms"]:
                line += "; to pixelport: " + ", ".join(
                    f"{r['label']} {s['probe_p99_ms'] / bs['probe_p99_ms']:.2f}x" for r, s in probed if r is not base)
            out.append(line + ".")
        mem = [(r, s) for r, s in sums if s["rss_mib"]]
        if mem:
            least = min(mem, key=lambda x: x[1]["rss_mib"])
            line = f"   compositor peak RSS through the video: least {least[0]['label']} ({least[1]['rss_mib']:.0f} MiB)"
            if bs and bs["rss_mib"]:
                line += "; to pixelport: " + ", ".join(
                    f"{r['label']} {s['rss_mib'] / bs['rss_mib']:.2f}x" for r, s in mem if r is not base)
            out.append(line + ".")
    w0 = results["workloads"][0]
    for fmt in ("XRGB8888", "NV12"):
        have = [r for r in rows if r["status"] == "ok" and (r["present"].get(fmt) or {}).get("latency_ns")]
        if not have:
            continue
        meds = {r["name"]: median(r["present"][fmt]["latency_ns"]) / 1e6 for r in have}
        soonest = min(have, key=lambda r: meds[r["name"]])
        line = (f"commit to presented, {fmt} {w0['width']}x{w0['height']} over wl_shm (median): soonest "
                f"{soonest['label']} ({meds[soonest['name']]:.1f} ms)")
        if base is not None and base in have:
            parts = []
            for r in have:
                if r is base:
                    continue
                ratio, sure = bootstrap_ratio(r["present"][fmt]["latency_ns"], base["present"][fmt]["latency_ns"])
                parts.append(f"{r['label']} {ratio:.2f}x" + (" (sure)" if sure else " (~)"))
            line += f"; pixelport {meds[base['name']]:.1f} ms" + ("; others to it: " + ", ".join(parts) if parts else "")
        without = [r["label"] for r in rows if r["status"] == "ok" and r not in have]
        if without:
            line += f"; not measured in {', '.join(without)}" + (" (no NV12 in wl_shm)" if fmt == "NV12" else "")
        out.append(line + ".")
    paced = [(r, pacing_summary(r.get("pacing"))) for r in rows if r["status"] == "ok" and r.get("pacing")]
    if paced:
        steady = [r["label"] for r, p in paced if p["shown"] == p["frames"] and not p["skipped"]]
        others = [f"{r['label']} ({p['frames'] - p['shown']} not shown, {p['skipped']} skipped)" for r, p in paced
                  if r["label"] not in steady]
        line = ("a FIFO client's frames, one per refresh with none skipped or lost: "
                + (", ".join(steady) if steady else "nowhere"))
        if others:
            line += "; not so: " + ", ".join(others)
        timed = [f"{r['label']} {p['target_p50_ms']:.2f} ms" for r, p in paced if p["timed"] and p["targets"]]
        if timed:
            line += "; commit-timing targets, shown after them by (median): " + ", ".join(timed)
        out.append(line + ".")
    return out


def table(results):
    rows = results["compositors"]
    lines = []
    hdr = (f"   {'compositor':<50} {'shown':>5} {'drop':>4} {'CPU ms per shown frame':>24} {'comp %':>6} "
           f"{'probe p50/p99/worst ms':>22} {'peak RSS':>8}  how the frame gets there")
    for w in results["workloads"]:
        wn = w["name"]
        lines.append(f"{wn}: {w['width']}x{w['height']}@{w['rate']} NV12 (videotestsrc smpte100), "
                     f"{results['seconds']:g} s per play, medians of {results['rounds']} round(s)")
        lines.append(hdr)
        lines.append(f"   {'':<50} {'':>5} {'':>4} {'compositor + client = both':>24} {'(core)':>6}")
        for r in rows:
            if r["status"] == "unavailable":
                lines.append(f"   {r['label']:<50} not run: {r['reason']}")
                continue
            if r["status"] == "error":
                lines.append(f"   {r['label']:<50} ERROR: {r['reason']}")
                continue
            s = summarize(r, wn)
            if not s:
                lines.append(f"   {r['label']:<50} no video ({results.get('video_missing') or 'not played'})")
                continue
            cpu = f"{ms(s['compositor_ms'])} + {ms(s['client_ms'])} = {ms(s['total_ms'])}"
            probe = f"{ms(s['probe_p50_ms'])}/{ms(s['probe_p99_ms'])}/{ms(s['probe_worst_ms'])}"
            rss = f"{s['rss_mib']:.0f} MiB" if s["rss_mib"] else "-"
            comp_pct = f"{s['process_pct']:.0f}%" if s["process_pct"] is not None else "-"
            lines.append(f"   {r['label']:<50} {s['shown']:>5.0f} {s['dropped']:>4.0f} {cpu:>24} {comp_pct:>6} "
                         f"{probe:>22} {rss:>8}  {s['how']}")
        lines.append("")
    w0 = results["workloads"][0]
    lines.append(f"commit to presented (wp_presentation, client clock), {w0['width']}x{w0['height']} over wl_shm, "
                 "p50 / p99 ms, frames; p50 of the frame callbacks' interval, of commit to the buffer's release "
                 "(a buffer the compositor keeps until the next commit has none) and of the client's submit; "
                 "where the plugin is loaded, its convert and upload p50")
    for r in rows:
        if r["status"] != "ok":
            continue
        cells = []
        for fmt in ("XRGB8888", "NV12"):
            p = r["present"].get(fmt)
            if not p:
                continue
            own = [f"{ph} {median(p[ph + '_ns']) / 1e6:.2f}" for ph in ("convert", "upload") if p.get(ph + "_ns")]
            client = [f"{name} {median(p[ph + '_ns']) / 1e6:.2f}" for ph, name in
                      (("frame_interval", "frame interval"), ("release", "release"), ("submit", "submit"))
                      if p.get(ph + "_ns")]
            if p["latency_ns"]:
                head = (f"{fmt} {median(p['latency_ns']) / 1e6:.1f} / {pct(p['latency_ns'], 0.99) / 1e6:.1f} "
                        f"({len(p['latency_ns'])})")
            else:  # a compositor without wp_presentation feedback still has the client's own times
                head = f"{fmt}: {p['note'] or 'no presentation times'}"
            cells.append(", ".join([head] + client) + (f" (the plugin's timing: {', '.join(own)})" if own else ""))
        lines.append(f"   {r['label']:<50} " + ("; ".join(cells) if cells else "not measured"))
    lines += pacing_table(results)
    notes = sorted({n for r in rows for n in r["notes"]})
    for n in notes:
        lines.append(f"   note: {n}")
    return lines


def pacing_summary(runs):
    """One compositor's pacing rounds together: how it paced, frames shown of those made, intervals
    between presentations, skipped (over 1.5 refreshes apart) and target errors, or None."""
    if not runs:
        return None
    gaps = [g for r in runs for g in r["intervals_ns"]]
    refresh = next((r["refresh_ns"] for r in runs if r["refresh_ns"]), 0) or (median(gaps) if gaps else 0)
    errs = [e for r in runs for e in (r["target_error_ns"] or [])]
    return {"how": runs[0]["how"], "frames": sum(r["frames"] for r in runs), "shown": sum(r["shown"] for r in runs),
            "refresh_ms": refresh / 1e6 if refresh else None,
            "interval_p50_ms": median(gaps) / 1e6 if gaps else None, "interval_max_ms": max(gaps) / 1e6 if gaps else None,
            "skipped": sum(1 for g in gaps if refresh and g > 1.5 * refresh),
            "timed": any(r["target_error_ns"] is not None for r in runs),
            "early": sum(1 for e in errs if e < 0), "late": sum(1 for e in errs if refresh and e >= refresh),
            "target_p50_ms": median(errs) / 1e6 if errs else None, "target_max_ms": max(errs) / 1e6 if errs else None,
            "targets": len(errs)}


def pacing_table(results):
    rows = [r for r in results["compositors"] if r["status"] == "ok"]
    if not any(r.get("pacing") for r in rows):
        why = "no pixelport-pacing-client (a build's, or $PIXELPORT_PACING_CLIENT)" if not results.get(
            "pacing_client") else "not run"
        return ["", f"frame pacing: {why}"]
    lines = ["", "frame pacing: a FIFO client, 60 frames of 256x192 XRGB8888 as fast as its two buffers come back "
             "(wp_fifo_v1 where advertised, else a frame callback per frame); frames shown of those made, "
             "interval between presentations p50 / max ms, skipped (over 1.5 refreshes apart); "
             "12 commit-timing targets: shown after the target by p50 / max ms, early or a refresh late"]
    for r in rows:
        s = pacing_summary(r.get("pacing"))
        if s is None:
            lines.append(f"   {r['label']:<50} not measured")
            continue
        cell = (f"{s['how']}: {s['shown']}/{s['frames']} shown, interval {s['interval_p50_ms'] or 0:.1f} / "
                f"{s['interval_max_ms'] or 0:.1f}, {s['skipped']} skipped")
        if s["timed"]:
            cell += (f"; targets {s['target_p50_ms'] or 0:.2f} / {s['target_max_ms'] or 0:.2f}, "
                     f"{s['early']} early, {s['late']} late of {s['targets']}")
        else:
            cell += "; no commit-timing"
        lines.append(f"   {r['label']:<50} {cell}")
    return lines


def gnuplot(script, path):
    if not shutil.which("gnuplot"):
        return "gnuplot not installed (apt-get install gnuplot-nox)"
    r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(path):
        return "gnuplot failed: " + (r.stderr.strip().split("\n") or ["?"])[-1]
    return None


def q(s):
    return "'" + s.replace("'", "''") + "'"


def plots(results, out):
    """cpu-WORKLOAD.png (compositor and client stacked per compositor) and present.png (the
    distribution of commit to presented per compositor). Returns (files, problems)."""
    files, problems = [], []
    rows = [r for r in results["compositors"] if r["status"] == "ok"]
    tmp = tempfile.mkdtemp(prefix="pixelport-plot-")
    try:
        for w in results["workloads"]:
            data = [(r["label"], summarize(r, w["name"])) for r in rows]
            data = [(label, s) for label, s in data if s and s["total_ms"] is not None]
            if not data:
                continue
            tsv = os.path.join(tmp, f"cpu-{w['name']}.tsv")
            with open(tsv, "w") as f:
                for label, s in data:
                    f.write(f"\"{label}\"\t{s['compositor_ms']:.4f}\t{s['client_ms']:.4f}\n")
            png = os.path.join(out, f"cpu-{w['name']}.png")
            script = (f"set terminal pngcairo size {max(800, 150 * len(data))},650 noenhanced\nset output {q(png)}\n"
                      f"set title {q(w['name'] + ' NV12 video: CPU per shown frame, compositor and client stacked (median of the rounds)')}\n"
                      "set datafile separator '\\t'\nset style data histograms\nset style histogram rowstacked\n"
                      "set style fill solid 0.7 border -1\nset boxwidth 0.6\nset ylabel 'CPU ms per shown frame'\n"
                      "set yrange [0:*]\nset xtics rotate by -25 scale 0\nset bmargin 12\nset rmargin 8\nset key top left\n"
                      f"plot {q(tsv)} using 2:xtic(1) title 'compositor' lc rgb '#0072B2', '' using 3 title 'client' lc rgb '#E69F00'\n")
            why = gnuplot(script, png)
            files += [os.path.basename(png)] if not why else []
            problems += [why] if why else []
        series = [(r["label"], sorted(r["present"]["XRGB8888"]["latency_ns"])) for r in rows
                  if (r["present"].get("XRGB8888") or {}).get("latency_ns")]
        if series:
            # Okabe-Ito's eight and four of Tol's muted colours, then the same dashed: no two series alike.
            colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
                       "#882255", "#44AA99", "#999933", "#AA4499"]
            plot_lines = []
            for i, (label, v) in enumerate(series):
                tsv = os.path.join(tmp, f"present-{i}.tsv")
                v = [x for x in v if x > 0]  # a log axis
                with open(tsv, "w") as f:
                    for k, x in enumerate(v):
                        f.write(f"{x / 1e6:.4f}\t{(k + 1) / len(v):.4f}\n")
                plot_lines.append(f"{q(tsv)} using 1:2 with steps lw 2 lc rgb '{colours[i % len(colours)]}' dt {1 + i // len(colours)} "
                                  f"title {q(label)}")
            png = os.path.join(out, "present.png")
            w0 = results["workloads"][0]
            title = f"commit to presented, XRGB8888 {w0['width']}x{w0['height']} over wl_shm: share of frames presented within x"
            # Log x: the refresh-bound cluster near 16 ms and software renderers' 100 ms both read.
            script = (f"set terminal pngcairo size 1400,650 noenhanced\nset output {q(png)}\nset title {q(title)}\n"
                      "set datafile separator '\\t'\nset xlabel 'ms from the commit to wp_presentation.presented (log scale)'\n"
                      "set logscale x\nset xtics ('1' 1, '2' 2, '5' 5, '10' 10, '16.7' 16.7, '33.3' 33.3, "
                      "'100' 100, '200' 200, '500' 500, '1000' 1000)\n"
                      "set ylabel 'share of frames'\nset yrange [0:1]\nset key outside right top\nset grid\n"
                      "plot " + ", ".join(plot_lines) + "\n")
            why = gnuplot(script, png)
            files += [os.path.basename(png)] if not why else []
            problems += [why] if why else []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files, sorted(set(problems))


def write(results, out):
    """Writes compositors.txt, compositors.csv and the plots into out; returns the text."""
    head = "compositors compared" + (f" on {results['machine']}" if results.get("machine") else "") + \
        f" ({'quick, ' if results.get('quick') else ''}{results['rounds']} round(s), each compositor headless in a private runtime)"
    lines = [head, "verdict (ratios: that compositor / pixelport; below 1 costs less or is sooner):"]
    lines += ["  " + v for v in verdict(results)] or ["  nothing measured"]
    lines.append("")
    lines += table(results)
    files, problems = plots(results, out)
    lines.append("")
    if files:
        lines.append("plots: " + ", ".join(files))
    for p in problems:
        lines.append(f"no plot: {p}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "compositors.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "compositors.csv"), "w", newline="") as f:
        c = csv.writer(f)
        c.writerow(["compositor", "label", "status", "reason", "workload", "how", "rounds", "shown", "dropped",
                    "compositor_ms_per_frame", "client_ms_per_frame", "total_ms_per_frame", "probe_p50_ms",
                    "probe_p99_ms", "probe_worst_ms", "peak_rss_mib", "present_xrgb_p50_ms", "present_nv12_p50_ms",
                    "frame_interval_xrgb_p50_ms", "frame_interval_nv12_p50_ms", "release_xrgb_p50_ms",
                    "release_nv12_p50_ms", "pacing", "pacing_frames", "pacing_shown", "pacing_interval_p50_ms",
                    "pacing_skipped", "target_error_p50_ms"])
        for r in results["compositors"]:
            pres = [median((r["present"].get(f) or {}).get(ph + "_ns") or [None])
                    for ph in ("latency", "frame_interval", "release") for f in ("XRGB8888", "NV12")]
            pres = ["" if p is None else f"{p / 1e6:.3f}" for p in pres]
            ps = pacing_summary(r.get("pacing")) if r["status"] == "ok" else None
            pres += ["", "", "", "", "", ""] if not ps else [
                ps["how"], ps["frames"], ps["shown"], "" if ps["interval_p50_ms"] is None else f"{ps['interval_p50_ms']:.3f}",
                ps["skipped"], "" if ps["target_p50_ms"] is None else f"{ps['target_p50_ms']:.3f}"]
            for w in results["workloads"]:
                s = summarize(r, w["name"]) if r["status"] == "ok" else None
                vals = [""] * 10 if not s else [s["how"], s["rounds"], s["shown"], s["dropped"]] + [
                    "" if s[k] is None else f"{s[k]:.3f}" for k in ("compositor_ms", "client_ms", "total_ms",
                                                                    "probe_p50_ms", "probe_p99_ms", "probe_worst_ms")]
                rss = "" if not s or not s["rss_mib"] else f"{s['rss_mib']:.1f}"
                c.writerow([r["name"], r["label"], r["status"], r["reason"] or "", w["name"]] + vals + [rss] + pres)
    return text


if __name__ == "__main__":
    d = sys.argv[1]
    with open(os.path.join(d, "compositors.json")) as f:
        sys.stdout.write(write(json.load(f), d))
