#!/usr/bin/env python3
"""Checks a cross-built tree's meson test runs under qemu-user (scripts/ci-trixie, arm64).

  qemu-results.py TESTLOG.json... TEST... [TEST=FILTER]...

Every named test must have run and passed: meson reports a cross-built test it cannot start
(no exe_wrapper) as skipped with exit status 77, which would pass `meson test` with nothing run.
GoogleTest cases skipped inside a test are allowed but listed with their reason.

A test named with the GoogleTest filter it was given (TEST=FILTER, --test-args=--gtest_filter=
FILTER) is a chosen selection: every run of it must show that filter, every pattern of the
filter's positive part must match a case that passed (in one of the tests named with the same
filter: several programs may share one), and no case may be skipped. A test run
in shards (GTEST_TOTAL_SHARDS, one meson test and log per shard) is one test: every shard must
be there and have passed.

Prints one closing line: tests, cases passed, cases skipped.
"""
import fnmatch
import json
import re
import sys


def check_filter(name: str, wanted: str, runs: list[str]) -> int:
    """The filter applied to every run of a test."""
    bad = 0
    for out in runs:
        m = re.search(r"^Note: Google Test filter = (.*)$", out, re.M)
        if m is None or m.group(1).strip() != wanted:
            print(f"qemu-results: {name} ran under the filter {m.group(1) if m else 'none'}, not the one given")
            bad += 1
    return bad


def check_patterns(names: list[str], wanted: str, passed: list[str]) -> int:
    """Each pattern of a filter matched by a case that passed in one of the tests given it."""
    bad = 0
    for pattern in wanted.split("-", 1)[0].split(":"):
        if pattern and not any(fnmatch.fnmatchcase(case, pattern) for case in passed):
            print(f"qemu-results: {', '.join(names)}: no case passed for {pattern}")
            bad += 1
    return bad


def check_shards(name: str, runs: list[str]) -> int:
    """Each shard once, all of them, or no shards and one run."""
    notes = [re.search(r"^Note: This is test shard (\d+) of (\d+)\.$", out, re.M) for out in runs]
    if not any(notes):
        if len(runs) == 1:
            return 0
        print(f"qemu-results: {name} ran {len(runs)} times, not in shards")
        return 1
    totals = {int(n.group(2)) for n in notes if n}
    seen = sorted(int(n.group(1)) for n in notes if n)
    if len(totals) != 1 or None in notes or seen != list(range(1, max(totals) + 1)):
        print(f"qemu-results: {name}: shards {seen} of {sorted(totals)}, not each once")
        return 1
    return 0


def main() -> int:
    logs = [a for a in sys.argv[1:] if a.endswith(".json")]
    names = [a for a in sys.argv[1:] if not a.endswith(".json")]
    results: dict[str, list[dict]] = {}
    for log in logs:
        with open(log) as f:
            for line in f:
                r = json.loads(line)
                results.setdefault(r["name"].split(" / ")[-1], []).append(r)  # "project:suite / name"
    bad = 0
    passed = skipped = 0
    selections: dict[str, tuple[list[str], list[str]]] = {}  # filter: tests, cases passed
    for arg in names:
        name, _, selection = arg.partition("=")
        records = results.get(name)
        if records is None:
            print(f"qemu-results: {name} did not run")
            bad += 1
            continue
        failed = [r for r in records if r.get("result") != "OK"]
        for r in failed:
            print(f"qemu-results: {name}: {r.get('result')} (exit status {r.get('returncode')})")
        if failed:
            bad += 1
            continue
        runs = [r.get("stdout", "") or "" for r in records]
        out = "\n".join(runs)
        ok = re.findall(r"^\[       OK \] (\S+) \(\d+ ms\)$", out, re.M)
        if not ok:
            print(f"qemu-results: {name} ran no GoogleTest case")
            bad += 1
        passed += len(ok)
        # A skipped case prints its reason on the line before "[  SKIPPED ] Case (N ms)".
        for m in re.finditer(r"^(.*)\n\[  SKIPPED \] (\S+) \(\d+ ms\)$", out, re.M):
            skipped += 1
            print(f"qemu-results: {name}: {m.group(2)} skipped: {m.group(1).strip()}")
            if selection:
                bad += 1  # chosen to run: a skip is a case that did not
        bad += check_shards(name, runs)
        if selection:
            bad += check_filter(name, selection, runs)
            tests, cases = selections.setdefault(selection, ([], []))
            tests.append(name)
            cases.extend(ok)
    for selection, (tests, cases) in selections.items():
        bad += check_patterns(tests, selection, cases)
    tests = f"{len(names)} test{'s' if len(names) != 1 else ''}"
    print(f"arm64 under qemu-user: {tests}, {passed} cases passed, {skipped} skipped, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
