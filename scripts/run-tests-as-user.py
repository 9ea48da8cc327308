#!/usr/bin/env python3
"""Runs the pixelport test programs of a meson build dir as another (unprivileged) user.

Used by scripts/test when it runs as root: the compositor, clients and harness must work for
normal users. meson itself is not run as that user (it could not write its logs).
Usage: run-tests-as-user.py BUILDDIR USER [SUITE_LEFT_OUT...]
"""
import concurrent.futures
import json
import os
import pwd
import subprocess
import sys
import threading

builddir, user, left_out = sys.argv[1], sys.argv[2], set(sys.argv[3:])
info = pwd.getpwnam(user)
as_user = ["setpriv", f"--reuid={info.pw_uid}", f"--regid={info.pw_gid}", "--clear-groups", "--"]

# A checkout the user cannot reach (e.g. under a 0700 home such as /root) would fail every
# program: say so once, naming the folder that is closed to it.
path = "/"
parts = os.path.realpath(builddir).strip("/").split("/")
for i, part in enumerate(parts):
    path = os.path.join(path, part)
    need = ["-x", path] + (["-a", "-r", path] if i == len(parts) - 1 else [])  # the build dir is listed
    if subprocess.run(as_user + ["test"] + need).returncode != 0:
        mode = oct(os.stat(path).st_mode & 0o777)
        print(f"run-tests-as-user: {user} cannot read {path} (mode {mode[2:]}): the run as {user} needs a "
              f"checkout it can read (move it, or chmod o+x the folders above it)", flush=True)
        sys.exit(1)
# $MESON: the meson that configured builddir (scripts/test sets it for wlroots 0.19 builds).
tests = json.loads(subprocess.check_output(os.environ.get("MESON", "meson").split() + ["introspect", "--tests", builddir]))


def run(t):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "USER": user,
           "LANG": "C.UTF-8"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "PIXELPORT_HOSTS"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(t.get("env", {}))
    r = subprocess.run(as_user + t["cmd"], env=env, cwd="/tmp", timeout=t.get("timeout", 300) or None,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with lock:
        if r.returncode != 0:
            print(r.stdout[-20000:])
            print(f"-- {t['name']} as {user}: FAILED ({r.returncode})", flush=True)
        else:
            print(f"-- {t['name']} as {user}: ok", flush=True)
    return r.returncode == 0


# Two at a time, as scripts/test runs meson test; a test meson may not run beside others
# (is_parallel false) runs alone. The style suite checks sources, not programs: not run again.
lock = threading.Lock()
failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    running = []
    for t in tests:
        suites = t.get("suite", [])
        if not any(s == "pixelport" or s.startswith("pixelport:") for s in suites):
            continue
        names = {s.split(":")[-1] for s in suites}
        if names & left_out:
            continue
        if "style" in names:
            print(f"-- {t['name']}: a source check, not run again as {user}", flush=True)
            continue
        if not t.get("is_parallel", True):
            failed += sum(not f.result() for f in running)
            running = []
            failed += not run(t)
            continue
        running.append(pool.submit(run, t))
    failed += sum(not f.result() for f in running)
sys.exit(1 if failed else 0)
