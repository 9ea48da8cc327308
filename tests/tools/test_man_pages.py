#!/usr/bin/env python3
"""Every program option lives in its man page: for each program, the options its --help lists
and the options its man page's OPTIONS section names must be the same set.

    test_man_pages.py PROGRAM PAGE.scd [PROGRAM PAGE.scd ...]

The page is read from its scdoc source, so no scdoc is needed. In the OPTIONS section an option
counts when it is named on a term line (a line that is not indented); options that the
descriptions mention in passing do not. Long and short options are compared (--name, -x).
One line per program in GoogleTest's format, so that scripts/test's closing line counts it.
"""
import os
import re
import subprocess
import sys
import time

# CLI11's --help: option lines are indented by two spaces, wrapped descriptions by many more;
# argparse's (pixelport-compositors) put a space after the comma: "-h, --help".
HELP_OPTION = re.compile(r"^  (-[^\s,]+(?:, ?-[^\s,]+)*)")
# An option on a scdoc term line: *--name*, *-s, --startup*, *--peer waypipe*.
PAGE_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")


def help_options(program):
    out = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"{program} --help exited with {out.returncode}: {out.stderr.strip()}")
    names = set()
    for line in out.stdout.splitlines():
        m = HELP_OPTION.match(line)
        if m:
            names.update(n.strip() for n in m.group(1).split(",") if n.strip().startswith("-"))
    if not names:
        raise RuntimeError(f"{program} --help lists no options")
    return names


def page_options(page):
    names = set()
    section = None
    with open(page, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                section = line.lstrip("#").strip()
                continue
            if section != "OPTIONS" or not line.strip() or line[0].isspace():
                continue
            # Only the bold parts: _value_ placeholders and literal values stay out.
            for bold in re.findall(r"\*([^*]+)\*", line):
                names.update(PAGE_OPTION.findall(bold))
    if not names:
        raise RuntimeError(f"{page} has no OPTIONS section naming an option")
    return names


def main():
    pairs = list(zip(sys.argv[1::2], sys.argv[2::2]))
    if not pairs or len(sys.argv) % 2 == 0:
        print("usage: test_man_pages.py PROGRAM PAGE.scd [PROGRAM PAGE.scd ...]", file=sys.stderr)
        return 2
    failed = 0
    print(f"[==========] {len(pairs)} tests from ManPages")
    for program, page in pairs:
        name = f"ManPages.{os.path.basename(program)}"
        print(f"[ RUN      ] {name}", flush=True)
        t0 = time.monotonic()
        try:
            has, documented = help_options(program), page_options(page)
            failures = [f"{os.path.basename(program)}: {o} is in --help but not in {os.path.basename(page)}"
                        for o in sorted(has - documented)]
            failures += [f"{os.path.basename(program)}: {os.path.basename(page)} names {o}, which --help does not list"
                         for o in sorted(documented - has)]
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            failures = [str(e)]
        ms = int((time.monotonic() - t0) * 1000)
        for f in failures:
            print(f"failure: {f}")
        if failures:
            failed += 1
            print(f"[  FAILED  ] {name} ({ms} ms)", flush=True)
        else:
            print(f"[       OK ] {name} ({ms} ms)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
