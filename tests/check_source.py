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

  check_source.py columns ROOT
      The results row is declared once, in analysis/db.h's DB_RESULT_MAP:
      no other source lists its columns by position — six or more column
      names in a row, as one string's comma-separated list (an SQL column
      list) or as members of one struct (`r->seed, r->layers, ...`: a bind
      order, a wire's array). Such a list goes out of step with the table
      silently when a column is added; walk DB_RESULT_MAP instead. Exit
      status 1 and FILE:LINE: message per list.

  check_source.py workload ROOT
      A run's knobs are declared once, in traces/workload.h's WORKLOAD_MAP:
      no other source lists six or more of its names (a row's field, file
      key, option or sweep key) in a row — in one string, as string
      literals one after the other ({"model", "layers", ...}: a key list),
      as members of one variable (`w->layers, w->batch, ...`: a positional
      hash or copy) or as bare names (`long layers, batch, ...`: a struct
      that restates the rows). Walk workload_rows (or expand the map)
      instead: a knob added as a row then reaches every one of them. The
      stored formats that fix an order (the validation key) are allowed.
      Exit status 1 and FILE:LINE: message per list.
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


# Lists of results columns that are not the row's (file -> why).
COLUMNS_ALLOWED = {
    # validate's point key is a stored format: its order is what the rows
    # of existing databases are found by
    "analysis/validate.c": "the validation key",
}
COLUMNS_TABLE = "analysis/db.h"
COLUMNS_MIN = 6


def result_columns(root):
    """The column names of DB_RESULT_MAP's rows in ROOT's analysis/db.h."""
    with open(os.path.join(root, COLUMNS_TABLE), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r'^\s*X\(\s*\w+\s*,\s*"(\w+)"', text, flags=re.M)


def column_lists(code, cols):
    """(offset, text) of every list of COLUMNS_MIN or more column names in
    code (comments already blanked): in one string or string
    concatenation (names, or declarations "seed INTEGER"), or as members
    of one variable."""
    name = "(?:" + "|".join(sorted(cols, key=len, reverse=True)) + ")"
    sep = r'[\s"\\]*,[\s"\\]*'
    member = r"\b(\w+)\s*(?:->|\.)\s*" + name + r"\b"
    members = re.compile(member + "(?:" + sep + r"\1\s*(?:->|\.)\s*" + name +
                         r"\b){%d,}" % (COLUMNS_MIN - 1))
    decl = r"\b" + name + r"\b(?:\s+(?:INTEGER|REAL|TEXT)\b[A-Z ]*)?"
    bare = re.compile(decl + "(?:" + sep + decl + "){%d,}" % (COLUMNS_MIN - 1))
    out = [(m.start(), m.group(0)) for m in members.finditer(code)]
    string = r'"(?:\\.|[^"\\\n])*"'
    for lit in re.finditer(string + r"(?:[\s\\]*" + string + ")*", code):
        out += [(lit.start() + m.start(), m.group(0))
                for m in bare.finditer(lit.group(0))]
    return sorted(out)


def lists_in(root, table, allowed, find):
    """(file, line, text) of every list find(code) gives in the sources of
    ROOT but table and the allowed ones (comments blanked)."""
    for rel in sources(root):
        if rel == table or rel in allowed:
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        code = re.sub(r"/\*.*?\*/|//[^\n]*",
                      lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                      flags=re.S)
        for at, found in find(code):
            yield rel, code.count(chr(10), 0, at) + 1, found


def columns(root):
    cols = result_columns(root)
    bad = 0
    for rel, line, found in lists_in(root, COLUMNS_TABLE, COLUMNS_ALLOWED,
                                     lambda code: column_lists(code, cols)):
        items = len(re.findall(r",", found)) + 1
        print(f"{rel}:{line}: {items} results columns listed by position "
              f"({found.split(',')[0].strip()}, ...): walk {COLUMNS_TABLE}'s "
              "DB_RESULT_MAP instead")
        bad += 1
    print(f"columns: {len(cols)} columns of {COLUMNS_TABLE}, "
          f"{len(sources(root))} files, {bad} positional lists")
    return 1 if bad or not cols else 0


# The map, and the sources whose lists of knob names are stored formats.
WORKLOAD_TABLE = "traces/workload.h"
WORKLOAD_ALLOWED = COLUMNS_ALLOWED
WORKLOAD_MIN = 6


def workload_names(root):
    """Every name of WORKLOAD_MAP's rows in ROOT's traces/workload.h: the
    fields and the key, option and sweep strings (options with '-' as
    they are, and with '_')."""
    with open(os.path.join(root, WORKLOAD_TABLE), encoding="utf-8") as f:
        text = f.read()
    start = text.find("#define WORKLOAD_MAP(")
    body = text[start:text.find("\n\n", start)] if start >= 0 else ""
    names = set(re.findall(r"\bX\(\s*\w+\s*,\s*(\w+)", body))
    for m in re.finditer(r'\.(?:key|option|sweep)\s*=\s*"([\w-]+)"', body):
        names.add(m.group(1))
        names.add(m.group(1).replace("-", "_"))
    return names


def workload_lists(code, names):
    """(offset, text) of every list of WORKLOAD_MIN or more knob names in
    code (comments blanked): in one string, as adjacent string literals
    (a key list), and, as an initialiser's or a declaration's items (after
    '{', '=' or a type), as members of one variable or bare names. A
    function's arguments (a printf of the workload) are no list of the
    record."""
    name = "(?:" + "|".join(sorted(names, key=len, reverse=True)) + ")"
    more = "{%d,}" % (WORKLOAD_MIN - 1)
    quoted = r'"' + name + r'"'
    out = [(m.start(), m.group(0)) for m in
           re.finditer(quoted + r"(?:\s*,\s*" + quoted + ")" + more, code)]
    start = r"(?:[{=]|\b(?:int|long|double|bool|char|float)\b\s*\**)\s*"
    member = (start + r"((\w+)\s*(?:->|\.)\s*" + name +
              r"\b(?:\s*,\s*\2\s*(?:->|\.)\s*" + name + r"\b)" + more + ")")
    bare = start + r"(" + name + r"\b(?:\s*,\s*" + name + r"\b)" + more + ")"
    plain = strip(code)
    for p in (member, bare):
        out += [(m.start(1), m.group(1)) for m in re.finditer(p, plain)]
    string = r'"(?:\\.|[^"\\\n])*"'
    for lit in re.finditer(string + r"(?:[\s\\]*" + string + ")*", code):
        joined = re.sub(r'"[\s\\]*"', "", lit.group(0))
        out += [(lit.start(), m.group(0)) for m in
                re.finditer(r"\b" + name + r"\b(?:\s*,\s*" + name + r"\b)"
                            + more, joined)]
    return sorted(set(out))


def workload(root):
    names = workload_names(root)
    bad = 0
    for rel, line, found in lists_in(root, WORKLOAD_TABLE, WORKLOAD_ALLOWED,
                                     lambda code: workload_lists(code, names)):
        items = len(re.findall(r",", found)) + 1
        print(f"{rel}:{line}: {items} knob names listed "
              f"({found.split(',')[0].strip()}, ...): walk {WORKLOAD_TABLE}'s "
              "WORKLOAD_MAP (workload_rows) instead")
        bad += 1
    print(f"workload: {len(names)} names of {WORKLOAD_TABLE}'s rows, "
          f"{len(sources(root))} files, {bad} lists")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    checks = {"layering": layering, "quiet": quiet, "sizes": sizes,
              "columns": columns, "workload": workload}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        sys.exit(__doc__)
    sys.exit(checks[sys.argv[1]](sys.argv[2]))
