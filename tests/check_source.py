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

  check_source.py pages ROOT
      The README and its pages (every .md of the repository, build trees
      aside) hold together: every relative link and image of a page names a
      file inside ROOT that exists, and its #anchor a heading of that page
      (GitHub's anchors); every NAME.md a page mentions exists (beside the
      page or from ROOT); every page is reachable by links from README.md,
      and README.md stays under README_MAX lines. Exit status 1 and
      FILE:LINE: message per problem.
  check_source.py dispatch ROOT
      Dispatch cannot fall through: no switch in the libraries and the
      front end has a default label, so that -Werror=switch fails the
      build when a value is added to an enumeration (or a name to its map)
      without its case. A switch over an int or a char that needs one is
      listed in DISPATCH_ALLOWED (FILE:FUNCTION and why). And a switch over
      a name table's index (names_find, a *_find or *_parse call) casts it
      to the table's enumeration, handling -1 before, so that its cases are
      checked too. The values of the workload's maps (schedule, dp_algo,
      runtime) and of the network models are asked by such a switch (or a
      predicate that is one), never compared with == or != nor their names
      with strcmp or strstr: an added name would take the other branch.
      Exit status 1 and FILE:LINE: message per switch, comparison, and
      allowance that no longer matches a switch.
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
  check_source.py circles ROOT
      No circle of files inside a folder: a module (x.c and x.h, one node)
      that includes a header of its folder is above it, and no chain of such
      includes comes back to where it started — two files that need each
      other have a seam (a lower file both use) or are one file. A circle
      is allowed when the header of one of its members says why, in a line
      of its first comment that reads `circle: REASON` (an internal header
      of a module's files, which includes the module's header for its
      types). Exit status 1 and FOLDER: message per circle without one.
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


def includes(root, rel):
    """(line, path) of each quoted #include of the file rel, in order."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def layering(root):
    bad = 0
    for rel in sources(root):
        mine = layer_of_source(rel)
        for n, inc in includes(root, rel):
            theirs = layer_of_include(inc)
            if theirs is None:
                roots = ", ".join(f"{x}/" for x in LAYERS[:-1])
                print(f"{rel}:{n}: #include \"{inc}\" is not "
                      f"spelled from a layer's root ({roots})")
                bad += 1
            elif LAYERS.index(theirs) > LAYERS.index(mine):
                allowed = ", ".join(LAYERS[: LAYERS.index(mine) + 1])
                print(f"{rel}:{n}: #include \"{inc}\" reaches up "
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


# Trees of planted bad pages: checked only as a ROOT of their own.
PAGES_PLANTED = {"tests/fixtures/pages"}
README_MAX = 300
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MD_NAME = re.compile(r"(?<![\w./-])([\w./-]*\w\.md)\b")


def page_files(root):
    """Every .md under ROOT (relative, sorted): hidden folders, build trees
    (a CMakeCache.txt) and planted trees aside."""
    out = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        keep = []
        for d in sorted(dirs):
            sub = d if rel == "." else f"{rel}/{d}"
            if d.startswith(".") or sub in PAGES_PLANTED or os.path.exists(
                    os.path.join(folder, d, "CMakeCache.txt")):
                continue
            keep.append(d)
        dirs[:] = keep
        out += [f if rel == "." else f"{rel}/{f}" for f in files
                if f.endswith(".md")]
    return sorted(out)


def page_lines(text):
    """(line number, line, inside a fence) of a page."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            yield n, line, True
        else:
            yield n, line, fenced


def slug(heading):
    """GitHub's anchor of a heading: its text (a link's text, no markup)
    lower-cased, punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text):
    """The anchors of a page's headings (a repeated one gets -1, -2, ...)."""
    seen, out = {}, set()
    for _, line, fenced in page_lines(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        a = slug(m.group(1))
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else f"{a}-{k}")
    return out


def page_links(text):
    """(line number, target) of every link and image outside code."""
    for n, line, fenced in page_lines(text):
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield n, m.group(1)


def check_link(root, rel, target, texts):
    """The problem with the link target of page rel, or None; the page it
    leads to (relative to ROOT) in texts' keys when it is one."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None, None  # https:, mailto:
    path, _, anchor = target.partition("#")
    dest = rel if not path else os.path.normpath(
        os.path.join(os.path.dirname(rel), path)).replace(os.sep, "/")
    if dest == ".." or dest.startswith("../"):
        return f"{target}: outside the repository", None
    if not os.path.exists(os.path.join(root, dest)):
        return f"{target}: no such file", None
    if anchor and dest.endswith(".md"):
        if dest not in texts:
            with open(os.path.join(root, dest), encoding="utf-8") as f:
                texts[dest] = f.read()
        if anchor not in anchors(texts[dest]):
            return f"{target}: no heading #{anchor} in {dest}", None
    return None, dest if dest.endswith(".md") else None


def pages(root):
    bad = 0
    names = page_files(root)
    texts = {}
    for rel in names:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            texts[rel] = f.read()
    edges = {rel: set() for rel in names}
    for rel in names:
        for n, target in page_links(texts[rel]):
            problem, dest = check_link(root, rel, target, texts)
            if problem:
                print(f"{rel}:{n}: link {problem}")
                bad += 1
            elif dest:
                edges[rel].add(dest)
        for n, line, _ in page_lines(texts[rel]):
            for m in MD_NAME.finditer(LINK.sub("", line)):  # links: above
                name = m.group(1)
                here = os.path.join(root, os.path.dirname(rel), name)
                if not (os.path.exists(here) or
                        os.path.exists(os.path.join(root, name))):
                    print(f"{rel}:{n}: {name} is not in the repository "
                          "(point to a page that is, or say it here)")
                    bad += 1
    reached, todo = set(), ["README.md"] if "README.md" in names else []
    while todo:
        page = todo.pop()
        if page not in reached:
            reached.add(page)
            todo += sorted(edges.get(page, ()))
    for rel in names:
        if rel not in reached:
            print(f"{rel}:1: no link from README.md leads here: add it to "
                  "the README's contents")
            bad += 1
    if "README.md" in texts:
        lines = texts["README.md"].count("\n")
        if lines >= README_MAX:
            print(f"README.md:{lines}: {lines} lines, over {README_MAX - 1}: "
                  "move a topic into its page")
            bad += 1
    print(f"pages: {len(names)} pages, {len(reached)} reached from README.md, "
          f"{bad} problems")
# Switches that keep a default label, and comparisons with a map's name
# that are no dispatch over the map, and why (FILE:FUNCTION -> reason).
DISPATCH_ALLOWED = {
    "sim/net.c:sim_net_handle":
        "over an int (a queue item's kind less the net's base): the default "
        "asserts that the kind is the net's",
    "analysis/reproduce.c:is_megatron":
        "the calibration file's system column (megatron, megatron_random), "
        "its own vocabulary, not the runtime map",
}
# The maps whose values no code compares with (map, its header, the prefix
# of its enumeration's values: models/spec.h makes SPEC_RING of RING).
DISPATCH_MAPS = [
    ("WORKLOAD_SCHEDULE_MAP", "traces/workload.h", "SPEC_"),
    ("WORKLOAD_DP_ALGO_MAP", "traces/workload.h", "SPEC_"),
    ("WORKLOAD_RUNTIME_MAP", "traces/workload.h", "SPEC_RUNTIME_"),
    ("TRANSPORT_MODEL_MAP", "models/transport.h", "TRANSPORT_"),
    ("SCENARIO_SHAPING_MAP", "traces/scenario.h", "SCENARIO_SHAPING_"),
]
SWITCH = re.compile(r"\bswitch\s*\(")
NAME_INDEX = re.compile(r"\b(?:\w+_find|\w+_parse)\s*\(")


def balanced(code, i, open_, close):
    """The index just past the bracket that closes the one at code[i]."""
    depth = 0
    for k in range(i, len(code)):
        if code[k] == open_:
            depth += 1
        elif code[k] == close:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(code)


def switches(code):
    """(offset, expression, [offsets of its own default labels]) of every
    switch in code (comments and strings blanked); a label of a nested
    switch is that switch's, and a default of _Generic (after a comma) is
    no label."""
    out = []
    for m in SWITCH.finditer(code):
        close = balanced(code, m.end() - 1, "(", ")")
        expr = " ".join(code[m.end():close - 1].split())
        body = code.find("{", close)
        end = balanced(code, body, "{", "}")
        labels, k = [], body + 1
        while k < end - 1:
            inner = SWITCH.search(code, k, end - 1)
            stop = inner.start() if inner else end - 1
            for d in re.finditer(r"\bdefault\s*:", code[k:stop]):
                before = code[:k + d.start()].rstrip()[-1:]
                if before in (";", "{", "}", ":"):
                    labels.append(k + d.start())
            if not inner:
                break
            ibody = code.find("{", balanced(code, inner.end() - 1, "(", ")"))
            k = balanced(code, ibody, "{", "}")
        out.append((m.start(), expr, labels))
    return out


def map_rows(root):
    """{value: map} and {name: map} of DISPATCH_MAPS' rows in ROOT (none for
    a map whose header is not there)."""
    values, names = {}, {}
    for m, header, prefix in DISPATCH_MAPS:
        path = os.path.join(root, header)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        d = re.search(r"#define " + m + r"\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
        for ident, name in re.findall(r'X\(\s*(\w+)\s*,\s*"([^"]+)"',
                                      d.group(1) if d else ""):
            values[prefix + ident] = m
            names[name] = m
    return values, names


def comparisons(rel, text, code, rows):
    """(line, what) of every comparison with a map's value (in code,
    comments and strings blanked) or a map's name (in text)."""
    values, names = rows
    out = []
    if values:
        v = "|".join(sorted(values, key=len, reverse=True))
        for m in re.finditer(r"[=!]=\s*(%s)\b|\b(%s)\s*[=!]=" % (v, v), code):
            value = m.group(1) or m.group(2)
            out.append((code.count("\n", 0, m.start()) + 1,
                        f"compares with {value}, a value of {values[value]}"))
    if names:
        n = "|".join(re.escape(x) for x in sorted(names, key=len, reverse=True))
        nocomment = re.sub(r"/\*.*?\*/|//[^\n]*",
                           lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                           flags=re.S)
        for m in re.finditer(r'\bstr(?:n?cmp|str)\s*\([^;]*?"(%s)"' % n,
                             nocomment):
            out.append((nocomment.count("\n", 0, m.start()) + 1,
                        f'compares a name with "{m.group(1)}", a name of '
                        f"{names[m.group(1)]}"))
    return out


def dispatch(root):
    bad, total, allowed_seen = 0, 0, set()
    rows = map_rows(root)
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        code = strip(text)
        spans = functions(text)

        def function_at(line):
            return next((n for n, a, b in spans if a <= line <= b), "")

        def where(at):
            line = code.count("\n", 0, at) + 1
            return line, function_at(line)
        found = []
        for line, what in comparisons(rel, text, code, rows):
            key = f"{rel}:{function_at(line)}"
            if key in DISPATCH_ALLOWED:
                allowed_seen.add(key)
                continue
            found.append((line, f"{what}: switch over every value (or ask "
                          "a predicate that does), so that a name added to "
                          "the map without its case fails to build"))
        for at, expr, labels in switches(code):
            total += 1
            line, fn = where(at)
            key = f"{rel}:{fn}"
            if labels and key in DISPATCH_ALLOWED:
                allowed_seen.add(key)
            elif labels:
                found.append((where(labels[0])[0], f"switch ({expr}) in {fn} "
                              "has a default: name every value instead, so "
                              "that -Werror=switch fails the build when one "
                              "is added (over an int or a char: "
                              "DISPATCH_ALLOWED, with the reason)"))
            if NAME_INDEX.search(expr) and not re.match(r"\(\s*\w+\s*\)",
                                                        expr):
                found.append((line, f"switch ({expr}) in {fn} is over a name "
                              "table's index, an int: handle -1 first, then "
                              "cast it to the table's enumeration"))
        for line, message in sorted(found):
            print(f"{rel}:{line}: {message}")
        bad += len(found)
    for key in sorted(set(DISPATCH_ALLOWED) - allowed_seen):
        if os.path.exists(os.path.join(root, key.split(":")[0])):
            print(f"{key.split(':')[0]}:1: DISPATCH_ALLOWED names {key}, "
                  "which has no default nor comparison: remove the entry")
            bad += 1
    print(f"dispatch: {len(sources(root))} files, {total} switches, "
          f"{len(rows[0])} values of {len(DISPATCH_MAPS)} maps: {bad} "
          "defaults, switches over a name's index or comparisons")
    return 1 if bad else 0


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


# A header's stated reason for a circle of includes (check_source circles).
CIRCLE_REASON = re.compile(r"^\s*(?:/\*|\*)?\s*circle:\s*\S")


def include_file(path):
    """The file (relative to ROOT) a quoted include names."""
    return "traces/" + path if path.startswith("base/") else path


def module_graph(root):
    """Per folder: its modules (x.c and x.h as one node, by stem) and the
    edges module -> module of the same folder that one of its files
    includes, with the FILE:LINE of the first include that makes each."""
    graphs = {}
    for rel in sources(root):
        folder, name = os.path.split(rel)
        graphs.setdefault(folder, {}).setdefault(os.path.splitext(name)[0],
                                                 {})
    for rel in sources(root):
        folder, name = os.path.split(rel)
        mine = os.path.splitext(name)[0]
        for n, path in includes(root, rel):
            inc = include_file(path)
            theirs = os.path.splitext(os.path.basename(inc))[0]
            if (os.path.dirname(inc) == folder and theirs != mine and
                    theirs in graphs[folder]):
                graphs[folder][mine].setdefault(theirs, f"{rel}:{n}")
    return graphs


def components(graph):
    """The strongly connected components of more than one node (Tarjan's
    algorithm, iterative), each sorted, in a fixed order."""
    index, low, stack, on, out, count = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = count[0]
        count[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = count[0]
                    count[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def circle_reason(root, folder, module):
    """Whether module's header states why it is in a circle: a line
    `circle: REASON` in its first comment."""
    path = os.path.join(root, folder, module + ".h")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        text = f.read()
    end = text.find("*/")
    return any(CIRCLE_REASON.match(line)
               for line in text[:end if end >= 0 else 0].splitlines())


def circles(root):
    bad = stated = 0
    graphs = module_graph(root)
    for folder in sorted(graphs):
        graph = graphs[folder]
        for comp in components(graph):
            if any(circle_reason(root, folder, m) for m in comp):
                stated += 1
                continue
            edges = "; ".join(f"{graph[a][b]} includes {b}.h"
                              for a in comp for b in sorted(graph[a])
                              if b in comp)
            print(f"{folder}: {', '.join(comp)} form a circle of includes "
                  f"({edges}): find the seam (a lower file both use) or "
                  "merge them, or state why in one member's header "
                  "(a line 'circle: REASON' in its first comment)")
            bad += 1
    print(f"circles: {len(graphs)} folders, {stated} circles with a stated "
          f"reason, {bad} without")
    return 1 if bad else 0


if __name__ == "__main__":
    checks = {"layering": layering, "quiet": quiet, "sizes": sizes,
              "columns": columns, "pages": pages, "dispatch": dispatch,
              "workload": workload, "circles": circles}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        sys.exit(__doc__)
    sys.exit(checks[sys.argv[1]](sys.argv[2]))
