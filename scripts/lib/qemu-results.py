#!/usr/bin/env python3
"""Checks a cross-built tree's meson test run under qemu-user (scripts/ci-trixie, arm64).

  qemu-results.py TESTLOG.json TEST...

Every named test must have run and passed: meson reports a cross-built test it cannot start
(no exe_wrapper) as skipped with exit status 77, which would pass `meson test` with nothing run.
GoogleTest cases skipped inside a test are allowed but listed with their reason. Prints one
closing line: tests, cases passed, cases skipped.
"""
import json
import re
import sys


def main() -> int:
    log, names = sys.argv[1], sys.argv[2:]
    results = {}
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            results[r["name"].split(" / ")[-1]] = r  # "project:suite / name"
    bad = 0
    passed = skipped = 0
    for name in names:
        r = results.get(name)
        if r is None:
            print(f"qemu-results: {name} did not run")
            bad += 1
            continue
        if r.get("result") != "OK":
            print(f"qemu-results: {name}: {r.get('result')} (exit status {r.get('returncode')})")
            bad += 1
            continue
        out = r.get("stdout", "") or ""
        ok = len(re.findall(r"^\[       OK \] ", out, re.M))
        if ok == 0:
            print(f"qemu-results: {name} ran no GoogleTest case")
            bad += 1
        passed += ok
        # A skipped case prints its reason on the line before "[  SKIPPED ] Case (N ms)".
        for m in re.finditer(r"^(.*)\n\[  SKIPPED \] (\S+) \(\d+ ms\)$", out, re.M):
            skipped += 1
            print(f"qemu-results: {name}: {m.group(2)} skipped: {m.group(1).strip()}")
    print(f"arm64 under qemu-user: {len(names)} tests, {passed} cases passed, {skipped} skipped, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
