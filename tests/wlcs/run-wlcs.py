#!/usr/bin/env python3
"""Runs the Wayland conformance suite (wlcs) on libpixelport-wlcs.so and checks the outcome
against the checked-in lists for the wlcs version found, in VERSION/ beside this script (each
wlcs release runs other cases; see docs/conformance.md):

  expected-pass.txt  tests that must pass ("NAME @plugin": only with the plugin)
  expected-skip.txt  extensions we do not serve: wlcs skips the tests that need them
  expected-fail.txt  "PATTERN [flags] reason": known failures; [not-run] ones are filtered out
                     (they only wait for wlcs' 10 s timeout), [no-plugin] ones apply only there

Fails when an expected pass does not pass, when a test is in no list, or when wlcs crashes.
Usage: run-wlcs.py --wlcs BIN --wlcs-version V --module SO --mode plugin|no-plugin [--libdir DIR]
                   [--preload LIB]
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
LISTS = HERE  # HERE/VERSION, set in main()


def read_list(name):
    with open(os.path.join(LISTS, name)) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                yield line


def load(mode):
    other = "no-plugin" if mode == "plugin" else "plugin"
    passes = set()
    for line in read_list("expected-pass.txt"):
        name, _, tag = line.partition(" ")
        if tag.strip() in ("", "@" + mode):
            passes.add(name)
    skips = {}
    for line in read_list("expected-skip.txt"):
        ext, _, reason = line.partition(" ")
        skips[ext] = reason.strip()
    fails = []  # (pattern, not_run, reason)
    for line in read_list("expected-fail.txt"):
        pattern, _, rest = line.partition(" ")
        flags = re.findall(r"\[([a-z-]+)\]", rest)
        if other in flags:
            continue
        fails.append((pattern, "not-run" in flags, re.sub(r"\[[a-z-]+\]\s*", "", rest).strip()))
    return passes, skips, fails


def outcomes(xml_path):
    result = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = case.get("classname") + "." + case.get("name")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if "wlcs-skip-test" in props:
            result[name] = ("skip", props["wlcs-skip-test"])
        elif case.find("failure") is not None:
            result[name] = ("fail", case.find("failure").get("message", "").splitlines()[-1:])
        elif case.get("status") == "run" and case.get("result", "completed") == "completed":
            result[name] = ("pass", None)
        else:
            result[name] = ("notrun", None)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wlcs", required=True, action="append", help="the last one given is used")
    ap.add_argument("--wlcs-version", required=True, help="the expected lists are in this folder")
    ap.add_argument("--module", required=True)
    ap.add_argument("--mode", choices=["plugin", "no-plugin"], required=True)
    ap.add_argument("--libdir", help="our libwayland 1.23, put first in LD_LIBRARY_PATH")
    ap.add_argument("--preload", help="library to LD_PRELOAD (a sanitizer runtime)")
    ap.add_argument("--timeout", type=int, default=240)
    args = ap.parse_args()
    args.wlcs = args.wlcs[-1]
    args.module = os.path.abspath(args.module)  # wlcs runs in a scratch directory
    if args.libdir:
        args.libdir = os.path.abspath(args.libdir)

    global LISTS
    LISTS = os.path.join(HERE, args.wlcs_version)
    if not os.path.isdir(LISTS):
        have = sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d)))
        print(f"wlcs {args.wlcs_version}: no expected lists for it (tests/wlcs/ has {', '.join(have)}); "
              f"write tests/wlcs/{args.wlcs_version}/ from a run's outcome")
        return 1
    passes, skips, fails = load(args.mode)
    env = dict(os.environ)
    # wlcs links Debian's libwayland 1.21, wlroots 0.18 needs 1.23: same sonames, so one
    # LD_LIBRARY_PATH entry makes both sides use our build (1.23 is backwards compatible).
    if args.libdir:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [args.libdir, env.get("LD_LIBRARY_PATH")]))
    if args.preload:
        env["LD_PRELOAD"] = args.preload
    # libwayland-client and -server both define the core interface tables: with both in one
    # process ASan reports an ODR violation (scripts/test --sanitize sets the same).
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:detect_odr_violation=0")
    supp = "suppressions=" + os.path.join(HERE, "lsan.supp")
    env["LSAN_OPTIONS"] = ":".join(filter(None, [env.get("LSAN_OPTIONS"), supp]))
    env["PIXELPORT_WLCS_NO_PLUGIN"] = "1" if args.mode == "no-plugin" else "0"
    not_run = [p for p, skip_run, _ in fails if skip_run]
    with tempfile.TemporaryDirectory(prefix="pixelport-wlcs-") as tmp:
        xml_path = os.path.join(tmp, "wlcs.xml")
        # SecondBadBufferTest is DISABLED_ upstream, but it is the second-instance bad-buffer
        # case we want: run disabled tests too (the other disabled ones are in not_run).
        cmd = [args.wlcs, args.module, "--gtest_output=xml:" + xml_path, "--gtest_also_run_disabled_tests"]
        if not_run:
            cmd.append("--gtest_filter=-" + ":".join(not_run))
        print("+ " + " ".join(cmd), flush=True)
        try:
            run = subprocess.run(cmd, env=env, cwd=tmp, timeout=args.timeout, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            print(f"wlcs ({args.mode}): timed out after {args.timeout} s")
            return 1
        if not os.path.exists(xml_path):
            print(run.stdout[-20000:])
            print(f"wlcs ({args.mode}): exit status {run.returncode} and no XML report (crashed?)")
            return 1
        got = outcomes(xml_path)

    problems, notes = [], []
    # Under a sanitizer a report is a failure even when every test passed (wlcs exits 1 for any
    # expected failure, so the exit status alone cannot tell).
    for report in re.findall(r"^.*(?:ERROR: \w+Sanitizer|runtime error:).*$", run.stdout, re.M)[:20]:
        problems.append(f"SANITIZER {report.strip()}")
    if problems:
        print(run.stdout[-20000:])

    counts = {"pass": 0, "skip": 0, "xfail": 0}
    for name in sorted(got):
        state, detail = got[name]
        if name in passes:
            if state == "pass":
                counts["pass"] += 1
            else:
                problems.append(f"REGRESSION {name}: expected to pass, got {state} {detail or ''}")
            continue
        fail = next((f for f in fails if fnmatch.fnmatchcase(name, f[0])), None)
        if state == "skip":
            ext = re.match(r"Missing extension: ([A-Za-z0-9_]+)", detail or "")
            if (ext and ext.group(1) in skips) or fail is not None:
                counts["skip"] += 1
            else:
                problems.append(f"UNLISTED {name}: skipped ({detail}), not in expected-skip.txt")
        elif fail is not None:
            counts["xfail"] += 1
            if state == "pass":
                notes.append(f"note: {name} passes now; move it to expected-pass.txt ({fail[2]})")
        elif state == "pass":
            problems.append(f"UNLISTED {name}: passes but is not in expected-pass.txt")
        elif state != "notrun":
            problems.append(f"UNLISTED {name}: {state} {detail or ''}, in no list")
    for name in sorted(passes - set(got)):
        problems.append(f"MISSING {name}: in expected-pass.txt but wlcs did not run it")

    for line in notes + problems:
        print(line)
    listed = subprocess.run([args.wlcs, args.module, "--gtest_list_tests", "--gtest_also_run_disabled_tests"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    names, suite = [], ""
    for line in listed.splitlines():  # "Suite." then "  test  # GetParam() = ..."
        if line and not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif line.strip():
            names.append(suite + line.split("#")[0].strip())
    not_run_count = sum(1 for n in names if n not in got and any(fnmatch.fnmatchcase(n, p) for p in not_run))
    print(f"wlcs ({args.mode}): {counts['pass']} passed, {counts['skip']} skipped, "
          f"{counts['xfail'] + not_run_count} expected failures ({not_run_count} of them not run), "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
