#!/usr/bin/env python3
"""The compositor comparison's answer (scripts/lib/compositors_report.py) from a recorded run:
data/debian12-quick.json is `scripts/demo --compositors --quick` on a 2-core Debian 12 machine
without a GPU (pixelport-compositor with and without the plugin, Weston 10 pixman and GL, Mutter
43, sway 1.10.1 preloaded and stock; KWin not installed). The expected figures are worked out
here from the raw rounds, not by the report's own code.

    test_compare_report.py SOURCE_ROOT
"""
import copy
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile
import unittest

root = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(root, "scripts", "lib"))
import compositors  # noqa: E402
import compositors_report as rep  # noqa: E402

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "debian12-quick.json")) as f:
    RUN = json.load(f)


def row(name, run=RUN):
    return next(r for r in run["compositors"] if r["name"] == name)


def totals(name):
    """CPU ms per shown frame, compositor + client, per round."""
    return [1000 * (r["compositor_s"] + r["client_s"]) / r["rendered"] for r in row(name)["video"]["1080p60"]]


class Report(unittest.TestCase):
    def test_summary_is_the_median_of_the_rounds(self):
        s = rep.summarize(row("reference"), "1080p60")
        rounds = row("reference")["video"]["1080p60"]
        self.assertEqual(s["rounds"], 2)
        self.assertAlmostEqual(s["compositor_ms"], (1000 * 0.31 / 120 + 1000 * 0.16 / 120) / 2)
        self.assertAlmostEqual(s["total_ms"], s["compositor_ms"] + s["client_ms"])
        self.assertEqual(s["shown"], 120)
        self.assertEqual(s["how"], "NV12 over wl_shm, converted by the plugin")
        self.assertAlmostEqual(s["probe_worst_ms"], max(r["probe"]["worst_roundtrip_us"] for r in rounds) / 1000)
        self.assertGreater(s["rss_mib"], 5)
        self.assertIsNone(rep.summarize(row("kwin"), "1080p60"))

    def test_verdict_names_the_cheapest_and_the_ratios_to_pixelport(self):
        lines = rep.verdict(RUN)
        video = lines[0]
        ref = statistics.median(totals("reference"))
        cheapest = min((r for r in RUN["compositors"] if r["status"] == "ok"),
                       key=lambda r: statistics.median(totals(r["name"])))
        self.assertIn(f"least {cheapest['label']} ", video)
        for name in ("weston-pixman", "weston-gl", "mutter", "reference-stock"):
            ratio = statistics.median(totals(name)) / ref
            self.assertGreater(ratio, 1.5, name)  # this run: each costs at least half again as much
            self.assertIn(f"{row(name)['label']} {ratio:.2f}x (sure)", video)
        # sway with the module: the two rounds disagree on the side (0.80x and 1.61x): no call.
        sway = statistics.median(totals("sway")) / ref
        self.assertIn(f"{row('sway')['label']} {sway:.2f}x (within the rounds' spread", video)
        self.assertNotIn("kwin", video)

    def test_verdict_on_presentation(self):
        lines = [l for l in rep.verdict(RUN) if l.startswith("commit to presented, XRGB8888")]
        self.assertEqual(len(lines), 1)
        med = {r["name"]: statistics.median(r["present"]["XRGB8888"]["latency_ns"]) / 1e6
               for r in RUN["compositors"] if r["status"] == "ok"}
        soonest = min(med, key=med.get)
        self.assertIn(f"soonest {row(soonest)['label']} ({med[soonest]:.1f} ms)", lines[0])
        wgl = med["weston-gl"] / med["reference"]
        self.assertGreater(wgl, 2)
        self.assertIn(f"{row('weston-gl')['label']} {wgl:.2f}x (sure)", lines[0])
        nv12 = next(l for l in rep.verdict(RUN) if l.startswith("commit to presented, NV12"))
        self.assertIn("not measured in", nv12)
        self.assertIn(row("mutter")["label"], nv12)  # Mutter 43 serves no YUV

    def test_table_rows_say_why_a_compositor_is_missing_or_failed(self):
        run = copy.deepcopy(RUN)
        bad = row("weston-gl", run)
        bad["status"], bad["reason"] = "error", "1080p60, round 2: exited during 1080p60 (status 139)"
        text = "\n".join(rep.table(run))
        self.assertIn("not run: not installed (apt-get install kwin-wayland)", text)
        self.assertIn("ERROR: 1080p60, round 2: exited during 1080p60 (status 139)", text)
        self.assertIn("note: GL on llvmpipe: its shaders run on the CPU", text)
        self.assertNotIn(bad["label"], "\n".join(rep.verdict(run)))
        ref_line = next(l for l in text.split("\n") if l.strip().startswith(row("reference")["label"]))
        s = rep.summarize(row("reference"), "1080p60")
        self.assertIn(f"{s['compositor_ms']:.2f} + {s['client_ms']:.2f} = {s['total_ms']:.2f}", ref_line)

    def test_round_rule(self):
        self.assertEqual(rep.round_ratio([2, 2.1], [1, 1])[:2], (2.05, True))
        self.assertFalse(rep.round_ratio([1.01, 1.5], [1, 1])[1])  # one round within 2%
        self.assertFalse(rep.round_ratio([1.5, 0.8], [1, 1])[1])  # the rounds disagree
        self.assertFalse(rep.round_ratio([3.0, 1.2], [1, 1])[1])  # lead 1.9x, spread 2.5x
        self.assertEqual(rep.round_ratio([3], [1]), (3.0, False, "one round: spread unknown"))
        self.assertEqual(rep.bootstrap_ratio([5, 5, 5], [5, 5, 5]), (1.0, False))
        self.assertTrue(rep.bootstrap_ratio([10, 11, 12, 10], [5, 5, 6, 5])[1])

    def test_files(self):
        out = tempfile.mkdtemp()
        try:
            text = rep.write(RUN, out)
            self.assertTrue(text.startswith("compositors compared on Debian 12, 2 cores"))
            with open(os.path.join(out, "compositors.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([r["compositor"] for r in rows], [r["name"] for r in RUN["compositors"]])
            ref = next(r for r in rows if r["compositor"] == "reference")
            self.assertAlmostEqual(float(ref["total_ms_per_frame"]), statistics.median(totals("reference")), places=2)
            self.assertEqual(next(r for r in rows if r["compositor"] == "kwin")["status"], "unavailable")
            if shutil.which("gnuplot"):
                for png in ("cpu-1080p60.png", "present.png"):
                    with open(os.path.join(out, png), "rb") as f:
                        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            else:
                print("plots not checked: gnuplot is not installed")
                self.assertIn("no plot: gnuplot not installed", text)
        finally:
            shutil.rmtree(out)



class Starting(unittest.TestCase):
    def test_a_compositor_that_cannot_be_run_is_a_reason_not_a_crash(self):
        d = tempfile.mkdtemp(prefix="pixelport-compare-test-")
        try:
            prog = os.path.join(d, "not-executable")
            with open(prog, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(prog, 0o644)

            class Fake(compositors.Peer):
                def argv(self, runtime, width, height):
                    return [prog]

            r = compositors.Running(Fake("fake"), 64, 64, os.path.join(d, "fake.log"))
            self.assertTrue(r.start_error and r.start_error.startswith(f"cannot run {prog}: "), r.start_error)
            self.assertIsNone(r.wait_ready(timeout=1))
            self.assertFalse(r.alive())
            r.stop()
            self.assertFalse(os.path.exists(r.runtime))
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_a_program_without_file_capabilities_runs_as_it_is(self):
        notes = []
        self.assertEqual(compositors.runnable("/bin/true", notes), "/bin/true")
        self.assertEqual(notes, [])

if __name__ == "__main__":
    unittest.main(verbosity=2)
