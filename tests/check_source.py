#!/usr/bin/env python3
"""check_source: the structural rules of README.md's "Layout", as tests.

  check_source.py layering ROOT
      Every quoted #include of a library source names a header of its own
      layer or of one below it: base <- traces <- models <- schedules <- sim
      <- analysis, with the front end (sim/cli/) on top. Headers are spelled
      from their layer's root ("models/cost.h", "base/mem.h"). Exit status 1
      and FILE:LINE: message per upward or unrooted include.

  check_source.py quiet ROOT
      The libraries never print, exit or abort: no printf, puts, perror,
      putchar, stdout, stderr, exit or abort in traces/ models/ schedules/
      sim/ (sim/cli/ aside) analysis/, except the out-of-memory wrapper
      (traces/base/mem.c) and what a forked sweep worker needs (it ends with
      _exit; the buffers are flushed before the fork). And one getopt loop:
      getopt_long appears in sim/cli/cli_opt.c alone.

  check_source.py sizes ROOT
      No function over 60 lines and no file over 700 lines in the libraries
      and the front end (tests are not checked: their tables may be long).
      A function counts from the first line of its declaration to its
      closing brace. Prints the longest function and file; exit status 1
      and FILE:LINE: message per function or file over the limit.
"""
import os
import re
import sys

LAYERS = ["base", "traces", "models", "schedules", "sim", "analysis", "cli"]
FUNCTION_MAX, FILE_MAX = 60, 700
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of_source(rel):
    """The layer of a source file (path relative to ROOT), None outside."""
    parts = rel.split("/")
    if parts[0] == "traces":
        return "base" if len(parts) > 2 and parts[1] == "base" else "traces"
    if parts[0] == "sim":
        return "cli" if len(parts) > 2 and parts[1] == "cli" else "sim"
    return parts[0] if parts[0] in LAYERS else None


def layer_of_include(path):
    """The layer an include names ("base/mem.h" -> base), None if unrooted."""
    parts = path.split("/")
    if len(parts) < 2:
        return None
    if parts[0] == "sim" and parts[1] == "cli":
        return "cli"
    return parts[0] if parts[0] in LAYERS[:-1] else None


def sources(root):
    """Every .c and .h of the libraries and the front end, sorted."""
    out = []
    for top in ("traces", "models", "schedules", "sim", "analysis"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(folder, f), root))
    return sorted(p.replace(os.sep, "/") for p in out)


def layering(root):
    bad = 0
    for rel in sources(root):
        mine = layer_of_source(rel)
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                theirs = layer_of_include(m.group(1))
                if theirs is None:
                    roots = ", ".join(f"{x}/" for x in LAYERS[:-1])
                    print(f"{rel}:{n}: #include \"{m.group(1)}\" is not "
                          f"spelled from a layer's root ({roots})")
                    bad += 1
                elif LAYERS.index(theirs) > LAYERS.index(mine):
                    allowed = ", ".join(LAYERS[: LAYERS.index(mine) + 1])
                    print(f"{rel}:{n}: #include \"{m.group(1)}\" reaches up "
                          f"from {mine} to {theirs} ({mine} may include "
                          f"{allowed})")
                    bad += 1
    print(f"layering: {len(sources(root))} files, {bad} upward or unrooted "
          "includes")
    return 1 if bad else 0


# What the quiet rule allows, and why (file -> words).
QUIET_ALLOWED = {
    "traces/base/mem.c": {"abort", "stderr"},  # the out-of-memory wrapper
    # the forked worker's end; buffers flushed before fork()
    "analysis/sweep_run.c": {"_exit", "stdout", "stderr"},
}
LOUD = re.compile(r"\b(printf|puts|perror|putchar|stdout|stderr|exit|_exit|"
                  r"abort)\b")


def quiet(root):
    bad = 0
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            code = strip(f.read())
        lines = code.split("\n")
        for n, line in enumerate(lines, 1):
            for m in LOUD.finditer(line):
                word = m.group(1)
                if "getopt_long" in line or "format(printf" in line:
                    continue
                if layer_of_source(rel) == "cli":
                    continue
                if word in QUIET_ALLOWED.get(rel, ()):
                    continue
                print(f"{rel}:{n}: {word}: a library never prints, exits or "
                      "aborts (report through the err record or a hook)")
                bad += 1
            if "getopt_long" in line and rel != "sim/cli/cli_opt.c":
                print(f"{rel}:{n}: getopt_long outside sim/cli/cli_opt.c: "
                      "declare the options in a cli_opt table")
                bad += 1
    print(f"quiet: {len(sources(root))} files, {bad} prints, exits, aborts or "
          "getopt loops out of place")
    return 1 if bad else 0


def strip(text):
    """text with comments, strings and character constants blanked, lines
    kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    pattern = (r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
               r"|'(?:\\.|[^'\\\n])*'")
    return re.sub(pattern, blank, text, flags=re.S)


def functions(text):
    """(name, first line, last line) of every function definition: a brace
    block at file level whose head (the text since the previous declaration
    ended) ends in NAME(...) and is no initialiser or type."""
    code = strip(text)
    out, depth, head_start, i = [], 0, 0, 0
    line_of = [0] * (len(code) + 1)
    n = 1
    for k, ch in enumerate(code):
        line_of[k] = n
        n += ch == "\n"
    line_of[len(code)] = n
    start = None
    for i, ch in enumerate(code):
        if depth == 0 and ch in ";}" or (depth == 0 and ch == "\n" and
                                         code[head_start:i].lstrip()
                                         .startswith("#")):
            head_start = i + 1
        if ch == "{":
            if depth == 0:
                head = code[head_start:i]
                m = re.search(r"(\w+)\s*\([^{};]*\)\s*$", head, flags=re.S)
                if m and "=" not in head and not re.search(
                        r"\b(struct|union|enum)\s*\w*\s*$", head):
                    first = head_start + len(head) - len(head.lstrip())
                    start = (m.group(1), line_of[first])
                else:
                    start = None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if start:
                    out.append((start[0], start[1], line_of[i]))
                start = None
                head_start = i + 1
    return out


def sizes(root):
    bad, longest, biggest = 0, None, None
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        nlines = text.count("\n")
        if biggest is None or nlines > biggest[0]:
            biggest = (nlines, rel)
        if nlines > FILE_MAX:
            print(f"{rel}:1: {nlines} lines, more than {FILE_MAX}")
            bad += 1
        for name, first, last in functions(text):
            length = last - first + 1
            if longest is None or length > longest[0]:
                longest = (length, f"{rel}:{first}", name)
            if length > FUNCTION_MAX:
                print(f"{rel}:{first}: {name} has {length} lines, more than "
                      f"{FUNCTION_MAX}")
                bad += 1
    print(f"sizes: longest function {longest[2]} ({longest[1]}), "
          f"{longest[0]} lines; longest file {biggest[1]}, {biggest[0]} "
          "lines")
    return 1 if bad else 0


if __name__ == "__main__":
    checks = {"layering": layering, "quiet": quiet, "sizes": sizes}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        sys.exit(__doc__)
    sys.exit(checks[sys.argv[1]](sys.argv[2]))
