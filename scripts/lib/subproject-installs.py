#!/usr/bin/env python3
"""Keeps the bundled subprojects (wlroots, wayland, libdrm, ...) out of `meson install`.

Meson gives a parent project no way to mark a subproject non-installable (meson#2550), so
scripts/bootstrap rewrites the copies it puts into subprojects/: their install rules apply only
when the project is built standalone (as tests/compositors/build-hosts builds them), never when
pixelport includes it as a subproject.

  subproject-installs.py rewrite DIR...   make DIR's install rules `not meson.is_subproject()`
  subproject-installs.py check BUILDDIR   fail when the configured build would install anything
                                          but pixelport's own files (meson-info/intro-installed.json)

rewrite turns `install: EXPR` into `install: (EXPR) and not meson.is_subproject()`, gives
configure_file(install_dir: ...) an explicit `install:` of that kind, and wraps the calls that
always install (install_headers, install_data, install_subdir, install_man, install_emptydir,
install_symlink, pkgconfig's generate) in `if not meson.is_subproject()`; wayland-protocols gets
an install_subdir() that installs nothing, so that others may still read its XML (see REGISTER).
The original of each changed file is kept as FILE.pixelport-orig and DIR/.pixelport-install-guard
records the rewrite's version: a second run does nothing, a newer version starts again from the
originals. A construct it cannot rewrite safely is an error, never skipped.
"""
import json
import os
import re
import sys

VERSION = "1"
MARKER = ".pixelport-install-guard"
ORIG = ".pixelport-orig"
GUARD = "not meson.is_subproject()"
ALWAYS = {"install_headers", "install_data", "install_subdir", "install_man", "install_emptydir",
          "install_symlink"}

TOKEN = re.compile(r"""
    (?P<str>f?'''.*?'''|f?'(?:\\.|[^'\\\n])*')
  | (?P<comment>\#[^\n]*)
  | (?P<nl>\n)
  | (?P<ws>[ \t\r]+|\\\n)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<num>0[xob][0-9a-fA-F]+|[0-9]+)
  | (?P<op>==|!=|<=|>=|\+=|[-+*/%()\[\]{},.:?=<>])
""", re.S | re.X)


class RewriteError(Exception):
    pass


def tokenize(text, path):
    """(kind, text, start, end) for every token except whitespace; depth-0 newlines kept."""
    toks, pos, depth = [], 0, 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            line = text.count("\n", 0, pos) + 1
            raise RewriteError(f"{path}:{line}: cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind == "op" and m.group() in "([{":
            depth += 1
        elif kind == "op" and m.group() in ")]}":
            depth -= 1
        if kind not in ("ws", "comment") and not (kind == "nl" and depth > 0):
            toks.append((kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return toks


def closing(toks, i):
    """Index of the bracket closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][1] if toks[j][0] == "op" else ""
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j
    raise RewriteError("unbalanced brackets")


def expr_end(toks, i):
    """Index just past the expression starting at toks[i] (up to a `,` or closing bracket)."""
    j = i
    while j < len(toks):
        t = toks[j][1] if toks[j][0] == "op" else ""
        if t in ("(", "[", "{"):
            j = closing(toks, j) + 1
            continue
        if t in (",", ")", "]", "}"):
            return j
        j += 1
    raise RewriteError("unterminated expression")


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def rewrite_text(text, path, pkg_names):
    toks = tokenize(text, path)
    edits = []  # (start, end, replacement), applied back to front
    wrapped_files = []

    def kwargs(open_i, close_i):
        """{name: token index of the value} of the call whose parentheses are toks[open_i..close_i]."""
        out, j = {}, open_i + 1
        while j < close_i:
            if (toks[j][0] == "ident" and toks[j + 1][1] == ":" and toks[j - 1][1] in ("(", ",")):
                out[toks[j][1]] = j + 2
            j = expr_end(toks, j) + 1 if toks[j][1] not in (",",) else j + 1
        return out

    def statement_call(start_i, open_i, what):
        """(line start offset, indent, close index) of a call that is a whole statement."""
        close_i = closing(toks, open_i)
        before_ok = start_i == 0 or toks[start_i - 1][0] == "nl"
        after_ok = close_i + 1 == len(toks) or toks[close_i + 1][0] == "nl"
        if not (before_ok and after_ok):
            raise RewriteError(f"{path}:{line_of(text, toks[start_i][2])}: {what}(...) is not a "
                               "statement of its own: cannot make it conditional")
        ls = text.rfind("\n", 0, toks[start_i][2]) + 1
        return ls, text[ls:toks[start_i][2]], close_i

    def wrap(start_i, open_i, what):
        if what in ("install_data", "install_subdir"):
            wrapped_files.append(what)
        ls, indent, close_i = statement_call(start_i, open_i, what)
        if re.search(r"if\s+" + re.escape(GUARD) + r"\s*\n\s*$", text[:ls]):
            return  # already wrapped
        edits.append((toks[start_i][2], toks[start_i][2], f"if {GUARD}\n{indent}"))
        end = toks[close_i][3]
        edits.append((end, end, f"\n{indent}endif"))

    i = 0
    while i < len(toks):
        kind, val, start, end = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        # install: EXPR  ->  install: (EXPR) and not meson.is_subproject()
        if (kind == "ident" and val == "install" and nxt == ":" and i > 0
                and toks[i - 1][1] in ("(", ",")):
            a = i + 2
            b = expr_end(toks, a)
            expr = text[toks[a][2]:toks[b - 1][3]]
            if not expr.endswith(GUARD) and expr != "false":
                edits.append((toks[a][2], toks[b - 1][3], f"({expr}) and {GUARD}"))
            i = b
            continue
        # install_headers(...) and the like: always install
        if kind == "ident" and val in ALWAYS and nxt == "(" and (i == 0 or toks[i - 1][1] != "."):
            wrap(i, i + 1, val)
            i += 2
            continue
        # pkgconfig.generate(...) / import('pkgconfig').generate(...)
        if kind == "ident" and val == "generate" and nxt == "(" and i >= 2 and toks[i - 1][1] == ".":
            if toks[i - 2][0] == "ident" and toks[i - 2][1] in pkg_names:
                wrap(i - 2, i + 1, f"{toks[i - 2][1]}.generate")
            elif toks[i - 2][1] == ")" and i >= 6 and toks[i - 5][1] == "import" and "pkgconfig" in toks[i - 3][1]:
                wrap(i - 5, i + 1, "import('pkgconfig').generate")
            i += 2
            continue
        # configure_file(install_dir: ...) installs unless told `install: false`
        if kind == "ident" and val == "configure_file" and nxt == "(":
            close_i = closing(toks, i + 1)
            kw = kwargs(i + 1, close_i)
            if "install_dir" in kw and "install" not in kw:
                prev = toks[close_i - 1]
                sep = " " if prev[1] == "," else ", "
                edits.append((prev[3], prev[3], f"{sep}install: {GUARD},"))
            i += 2
            continue
        i += 1

    for s, e, r in sorted(edits, key=lambda x: x[0], reverse=True):
        text = text[:s] + r + text[e:]
    return text, bool(wrapped_files)


# Meson lets another project read this one's source files through a dependency variable (wlroots
# and pixelport read wayland-protocols' XML through get_variable('pkgdatadir')) only when they are
# to be installed: by install_data(), or anywhere below the folder of a meson.build that calls
# install_subdir() ("Sandbox violation" otherwise). For the projects named here, an install_subdir()
# of a folder that does not exist keeps those reads allowed and installs nothing (into the prefix,
# which exists anyway).
EXPORTS_FILES = {"wayland-protocols"}
NOTHING = ".pixelport-installs-nothing"
REGISTER = f"""
if meson.is_subproject()
	install_subdir('{NOTHING}', install_dir: get_option('prefix'), strip_directory: true)
endif
"""


def register_installable(text, path):
    """The top-level meson.build with REGISTER after its project() call, if it needs one."""
    toks = tokenize(text, path)
    for i, t in enumerate(toks):
        if t[0] == "ident" and t[1] == "project" and toks[i + 1][1] == "(":
            if toks[i + 2][1].strip("'") not in EXPORTS_FILES:
                return text
            end = toks[closing(toks, i + 1)][3]
            nl = text.find("\n", end)
            return text[:nl + 1] + REGISTER + text[nl + 1:]
    raise RewriteError(f"{path}: no project() call")


def build_files(top):
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f == "meson.build":
                yield os.path.join(d, f)


def rewrite(top):
    top = top.rstrip("/")
    marker = os.path.join(top, MARKER)
    if os.path.isfile(marker) and open(marker).read().split()[:1] == [VERSION]:
        return 0
    sources = {}
    for f in build_files(top):
        orig = f + ORIG
        sources[f] = open(orig if os.path.exists(orig) else f).read()
    pkg_names = set()
    for text in sources.values():
        pkg_names.update(re.findall(r"^\s*([A-Za-z_]\w*)\s*=\s*import\(\s*'pkgconfig'\s*\)", text, re.M))
    changed = 0
    top_build = os.path.join(top, "meson.build")
    news = {}
    register = False
    for f, text in sources.items():
        news[f], wrapped = rewrite_text(text, f, pkg_names)
        register = register or wrapped
    if register:
        news[top_build] = register_installable(news[top_build], top_build)
    for f, text in sources.items():
        new = news[f]
        orig = f + ORIG
        if new != text:
            if not os.path.exists(orig):
                with open(orig, "w") as out:
                    out.write(text)
            changed += 1
        elif os.path.exists(orig):
            os.remove(orig)
        if new != open(f).read():
            with open(f, "w") as out:
                out.write(new)
    with open(marker, "w") as out:
        out.write(f"{VERSION}\n")
    return changed


def own(dest):
    """Is this install destination one of pixelport's own files?"""
    return any(p.startswith(("pixelport", "libpixelport")) for p in dest.split("/"))


def check(builddir):
    path = os.path.join(builddir, "meson-info", "intro-installed.json")
    with open(path) as f:
        installed = json.load(f)
    foreign = sorted(d for s, d in installed.items() if not own(d) and not s.endswith("/" + NOTHING))
    if foreign:
        print(f"subproject-installs: {builddir} would install {len(foreign)} files that are not "
              "pixelport's (the bundled subprojects' install rules are active; run scripts/bootstrap "
              "to rewrite subprojects/, then reconfigure):", file=sys.stderr)
        for d in foreign[:20]:
            print(f"  {d}", file=sys.stderr)
        if len(foreign) > 20:
            print(f"  ... and {len(foreign) - 20} more", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "rewrite":
        try:
            for top in argv[2:]:
                n = rewrite(top)
                if n:
                    print(f"subproject-installs: {os.path.basename(top.rstrip('/'))}: install rules of "
                          f"{n} meson.build files apply only when built standalone", file=sys.stderr)
        except RewriteError as e:
            print(f"subproject-installs: {e}", file=sys.stderr)
            return 1
        return 0
    if len(argv) == 3 and argv[1] == "check":
        return check(argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
