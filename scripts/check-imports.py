#!/usr/bin/env python3
"""Check that blobdrop's imports run one way: routes -> services -> store -> domain.

Run from a repository root:  python3 scripts/check-imports.py [--src src] [--no-tests] [--strict]
                                                      [--map] [--modules] [--quiet]

Every .rs file under src/ gets a layer from its path:
  src/{routes,services,store,commands}/...          -> that layer
  src/{main,cli,settings,startup,telemetry,lib}.rs  -> a root layer of that name (startup/ too)
  anything else                                      -> "unknown" (shown with its top module)
Arrows are read from `use` statements (grouped and multi-line `use crate::{a, b::{c, d}}` too),
from `crate::x::` / `super::` / `self::` paths anywhere in the code, from a mod.rs's own child
modules named by a bare path (`upload::post_files`), and from `blobdrop::` paths in main.rs.
A layer that is a crate of its own (the domain: crates/domain, which src/lib.rs names
`crate::domain` with `pub use blobdrop_domain as domain`) is not read: the compiler holds its rules
(its Cargo.toml names no other layer, and no HTTP or SQL crate but actix-web for the tests'
`test-support`). A path into it (`crate::domain::FileId`) is an arrow to that crate, judged as one to
its layer. The store's crates (crates/store, the facade the root names `crate::store`, over
crates/store-core, crates/store-sqlite, crates/store-postgres) are not read either: their Cargo.toml
files name only the domain and each other. Comments and string literals are ignored. `pub use` re-exports from a mod.rs of its own
children are facades: they are listed but not judged, and a path through one counts, for cycles, as
a path to the file it re-exports from (so `crate::services::Context` is services/context.rs).

Each arrow is OK, a VIOLATION, or UNPLACED (an end in "unknown" that no rule can judge yet).
Cycles between files (strongly connected components) are violations too, and so is a layer naming
an external crate it must not (actix/askama outside routes, sqlx/rusqlite outside store).
Exit 1 if there is any violation (with --strict also if any file or arrow is unplaced).
--place PATH=LAYER judges files as if already moved (a dry run of a planned move).
Standard library only.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

LAYER_FOLDERS = ("routes", "services", "store", "domain", "commands")
# Layers that are workspace crates of their own: the module the root crate names each by, and its folder.
MEMBER_CRATES = {"domain": "crates/domain", "store": "crates/store", "services": "crates/services", "routes": "crates/web"}
ROOT_FILES = ("main", "cli", "settings", "startup", "telemetry", "lib")

# Which layers each layer may import (its own layer always included). The rule of DESIGN.md:
# routes -> services -> store -> domain; commands -> services, store, domain; nothing imports
# routes but startup. Root files: main dispatches, cli names the commands' argument structs,
# settings holds the shared database arguments (its defaults come from store), startup wires it all.
ALLOWED = {
    "domain": {"domain"},
    "store": {"store", "domain"},
    "services": {"services", "store", "domain"},
    "routes": {"routes", "services", "domain"},
    "commands": {"commands", "services", "store", "domain", "settings", "telemetry"},
    "telemetry": {"telemetry"},
    "settings": {"settings", "store", "domain", "telemetry"},
    "cli": {"cli", "settings", "commands", "domain", "telemetry"},
    "startup": {"startup", "settings", "telemetry", "routes", "services", "store", "domain"},
    "main": {"main", "cli", "settings", "startup", "telemetry", "commands"},
    "lib": set(LAYER_FOLDERS) | set(ROOT_FILES),
}
ROUTES_IMPORTERS = {"routes", "startup", "lib"}

# External crates a layer must not name: HTTP and pages stay in routes, SQL drivers stay in store.
HTTP = {"actix_web", "actix_multipart", "tracing_actix_web", "askama"}
SQL = {"sqlx", "rusqlite"}
FORBIDDEN_CRATES = {
    "domain": HTTP | SQL | {"reqwest"},
    "store": HTTP | {"reqwest"},
    "services": HTTP | SQL | {"reqwest"},
    "routes": SQL,
    "commands": SQL | HTTP,
}

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"


# ----------------------------------------------------------------------------------------------
# Reading Rust source


def strip_comments_and_strings(text):
    """The text with comments and string/char literals blanked, newlines kept (so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        # raw strings: r"..", r#".."#, br".."
        m = re.match(r'b?r(#*)"', text[i:i + 260]) if c in "rb" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            hashes = m.group(1)
            end = text.find('"' + hashes, i + m.end())
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + re.sub(r"[^\n]", "", text[i:end]))
            i = end
            continue
        if c == '"' or (c == "b" and nxt == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + re.sub(r"[^\n]", "", text[i:j + 1]))
            i = j + 1
            continue
        if c == "'":
            # char literal or lifetime
            if nxt == "\\":
                j = text.find("'", i + 2 if text[i + 2:i + 3] != "'" else i + 3)
                j = n if j < 0 else j
                out.append("' '")
                i = j + 1
                continue
            if i + 2 < n and text[i + 2] == "'":
                out.append("' '")
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def block_end(code, start):
    """The offset just past the `}` that closes the block whose `{` ends right before `start`."""
    depth, j = 1, start
    while j < len(code) and depth:
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
        j += 1
    return j


def test_ranges(code):
    """Line ranges (1-based, inclusive) of `#[cfg(test)] mod NAME { ... }` blocks."""
    ranges = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", code):
        j = block_end(code, m.end())
        ranges.append((code.count("\n", 0, m.start()) + 1, code.count("\n", 0, j) + 1))
    return ranges


def inline_modules(code):
    """(start, end) offsets of inline `mod NAME { ... }` blocks: `super` inside one starts from it."""
    ranges = []
    for m in re.finditer(r"(?<![\w])mod\s+" + IDENT + r"\s*\{", code):
        ranges.append((m.start(), block_end(code, m.end())))
    return ranges


def use_statements(code):
    """(start, end, line, is_pub, body) of every `use` statement, bodies without the keyword and `;`."""
    found = []
    for m in re.finditer(r"(?:(?<=[;{}\n])|^)[ \t]*(pub(?:\s*\([^)]*\))?\s+)?use\s", code, re.M):
        start = m.end()
        depth, j = 0, start
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
            elif code[j] == ";" and depth == 0:
                break
            j += 1
        line = code.count("\n", 0, m.end() - 4) + 1
        found.append((m.start(), j + 1, line, bool(m.group(1)), code[start:j], start))
    return found


def tokenize_use(body, offset, code):
    tokens = []
    for m in re.finditer(r"::|[{},*]|" + IDENT, body):
        line = code.count("\n", 0, offset + m.start()) + 1
        tokens.append((m.group(0), line))
    return tokens


def parse_use_tree(tokens):
    """Every leaf path of a use tree, as (segments, line). `self` leaves name their parent."""
    paths = []
    pos = 0

    def tree(prefix):
        nonlocal pos
        segs = list(prefix)
        line = tokens[pos][1] if pos < len(tokens) else 0
        while pos < len(tokens):
            tok, line = tokens[pos]
            if tok == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos][0] != "}":
                    if tokens[pos][0] == ",":
                        pos += 1
                        continue
                    tree(segs)
                pos += 1  # the closing brace
                return
            if tok == "*":
                pos += 1
                paths.append((segs, line))
                return
            if tok == "::":
                pos += 1
                continue
            if tok in (",", "}"):
                break
            if tok == "as":
                pos += 2  # `as name`
                break
            if tok == "self":
                pos += 1
                if segs == list(prefix) and not prefix:
                    segs = ["self"]
                continue
            segs = segs + [tok]
            pos += 1
        paths.append((segs, line))

    while pos < len(tokens):
        if tokens[pos][0] == ",":
            pos += 1
            continue
        before = pos
        tree([])
        if pos == before:
            pos += 1
    return paths


# ----------------------------------------------------------------------------------------------
# The module tree


PLACED = []  # (path prefix, layer) from --place: where a file in no layer will go
CRATE_USES = []  # forbidden external crates named, filled while reading


class SourceFile:
    def __init__(self, src, path):
        self.path = path
        self.rel = os.path.relpath(path, src).replace(os.sep, "/")
        parts = self.rel[:-3].split("/")
        self.is_mod_file = parts[-1] in ("mod", "lib", "main")
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        self.module = tuple(parts)  # () for lib.rs and main.rs
        self.layer = layer_of(self.rel)
        self.top = self.rel.split("/")[0].removesuffix(".rs")


def layer_of(rel):
    for prefix, layer in PLACED:
        if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
            return layer
    parts = rel.split("/")
    if parts[0] in LAYER_FOLDERS and len(parts) > 1:
        return parts[0]
    if parts[0] == "startup" and len(parts) > 1:  # startup/mod.rs and its children (shutdown.rs)
        return "startup"
    if len(parts) == 1 and parts[0].removesuffix(".rs") in ROOT_FILES:
        return parts[0].removesuffix(".rs")
    return "unknown"


def label(f):
    if f.layer == "unknown":
        return f"unknown({f.top})"
    return f"{f.layer}<-{f.top}" if any(f.rel == p or (p.endswith("/") and f.rel.startswith(p)) for p, _ in PLACED) else f.layer


class MemberCrate:
    """A layer that is a crate of its own (MEMBER_CRATES): one end of arrows, never read."""

    def __init__(self, layer, folder):
        self.path = self.rel = folder
        self.module = (layer,)
        self.layer = self.top = layer
        self.is_mod_file = False


class Crate:
    def __init__(self, src):
        self.files = []
        for folder, _, names in os.walk(src):
            for name in sorted(names):
                if name.endswith(".rs"):
                    self.files.append(SourceFile(src, os.path.join(folder, name)))
        self.files.sort(key=lambda f: f.rel)
        self.by_module = {f.module: f for f in self.files if f.rel != "main.rs"}
        for layer, folder in MEMBER_CRATES.items():
            self.by_module.setdefault((layer,), MemberCrate(layer, folder))
        self.main = next((f for f in self.files if f.rel == "main.rs"), None)

    def resolve(self, module):
        """The file of the longest known prefix of a module path."""
        for k in range(len(module), -1, -1):
            f = self.by_module.get(tuple(module[:k]))
            if f is not None:
                return f
        return None

    def absolute(self, f, segs, inline_depth=0):
        """A path's module segments from the crate root, or None when it does not start inside the crate.
        `inline_depth`: how many inline `mod x { }` blocks enclose the path (their `super` stays in the file)."""
        if not segs:
            return None
        head = segs[0]
        here = list(f.module) + ["<inline>"] * inline_depth
        if head in ("crate",) or (head == "blobdrop" and f is self.main):
            return segs[1:]
        if head == "self":
            return here + segs[1:]
        if head == "super":
            k = 0
            while k < len(segs) and segs[k] == "super":
                k += 1
            if k > len(here):
                return None
            return here[:len(here) - k] + segs[k:]
        return None


# ----------------------------------------------------------------------------------------------
# Collecting arrows


class CrateUse:
    def __init__(self, src, line, crate_name, test):
        self.src, self.line, self.crate, self.test = src, line, crate_name, test


class Arrow:
    def __init__(self, src, dst, line, path, test, facade, module=()):
        self.src, self.dst, self.line, self.path, self.test, self.facade = src, dst, line, path, test, facade
        self.module = tuple(module)  # the path's module segments from the crate root


def child_modules(code):
    return set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", code, re.M))


def arrows_of(crate, f):
    with open(f.path, encoding="utf-8") as fh:
        code = strip_comments_and_strings(fh.read())
    tests = test_ranges(code)
    inline = inline_modules(code)
    depth_at = lambda pos: sum(1 for a, b in inline if a <= pos < b)
    in_test = lambda line: any(a <= line <= b for a, b in tests)
    children = child_modules(code) if f.is_mod_file else set()
    found = []

    def add(segs, line, is_pub=False, pos=0):
        if f is crate.main and segs and segs[0] == "crate":
            return  # the binary's own crate has no modules
        module = crate.absolute(f, segs, depth_at(pos))
        if module is not None and "<inline>" in module:
            return  # a path inside this same file
        if module is None and segs and segs[0] in children:
            module = list(f.module) + segs
        if module is None:
            return
        dst = crate.resolve(module)
        if dst is None or dst is f:
            return
        # `pub use child::Item` in a mod.rs (or lib.rs) re-exports its own descendant: a facade.
        facade = is_pub and f.is_mod_file and dst.module[:len(f.module)] == f.module and len(dst.module) > len(f.module)
        found.append(Arrow(f, dst, line, "::".join(segs), in_test(line), facade, module))

    spans = []
    for start, end, line, is_pub, body, body_at in use_statements(code):
        spans.append((start, end))
        for segs, leaf_line in parse_use_tree(tokenize_use(body, body_at, code)):
            add(segs, leaf_line, is_pub, start)

    # Paths in code outside use statements.
    def outside_use(pos):
        return not any(a <= pos < b for a, b in spans)

    path_re = re.compile(r"(?<![\w:$])((?:crate|self|super|blobdrop)(?:::(?:" + IDENT + r"))+)")
    for m in path_re.finditer(code):
        if not outside_use(m.start()):
            continue
        segs = m.group(1).split("::")
        if segs[0] == "blobdrop" and f is not crate.main:
            continue
        add(segs, code.count("\n", 0, m.start()) + 1, pos=m.start())
    forbidden = FORBIDDEN_CRATES.get(f.layer, set())
    if forbidden:
        crate_re = re.compile(r"(?<![\w:$])(" + "|".join(sorted(forbidden)) + r")::")
        for m in crate_re.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            CRATE_USES.append(CrateUse(f, line, m.group(1), in_test(line)))
    if children:
        child_re = re.compile(r"(?<![\w:$])(" + "|".join(map(re.escape, sorted(children))) + r")::(" + IDENT + ")")
        for m in child_re.finditer(code):
            if outside_use(m.start()):
                add([m.group(1), m.group(2)], code.count("\n", 0, m.start()) + 1, pos=m.start())
    return found


def judge(a):
    """('ok' | 'violation' | 'unplaced', reason)."""
    s, d = a.src.layer, a.dst.layer
    if a.facade:
        return "facade", "re-export of its own child"
    if d == "main":
        return "violation", "nothing imports main.rs"
    if d == "routes" and s not in ROUTES_IMPORTERS:
        return "violation", "nothing imports routes but startup"
    if s == "unknown" or d == "unknown":
        return "unplaced", "one end is in no layer yet"
    if s == d:
        return "ok", ""
    allowed = ALLOWED.get(s, set())
    if d in allowed:
        return "ok", ""
    return "violation", f"{s} may import {', '.join(sorted(allowed - {s})) or 'nothing'}"


def through_facades(arrows):
    """Where each arrow really ends: a path to an item that a mod.rs re-exports from one of its
    children (`pub use context::Context` in services/mod.rs) ends in the child's file, so a cycle
    through a facade (context.rs -> cleanup.rs -> `crate::services::Context`) is a cycle."""
    exported = defaultdict(dict)
    for a in arrows:
        if a.facade and a.module:
            exported[a.src.rel][a.module[-1]] = a.dst
    def end(a):
        item = a.module[len(a.dst.module)] if len(a.module) > len(a.dst.module) else None
        return exported.get(a.dst.rel, {}).get(item, a.dst)
    return end


def cycles(arrows):
    """Strongly connected components of more than one file, seen through facade re-exports (which
    are no arrows of their own)."""
    graph = defaultdict(set)
    end = through_facades(arrows)
    for a in arrows:
        if not a.facade:
            target = end(a)
            if target is not a.src:
                graph[a.src.rel].add(target.rel)
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10_000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
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

    for v in list(graph):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", default="src", help="source folder (default: src)")
    parser.add_argument("--no-tests", action="store_true", help="ignore arrows inside #[cfg(test)] modules")
    parser.add_argument("--strict", action="store_true", help="also fail on files in no layer and unplaced arrows")
    parser.add_argument("--map", action="store_true", help="print each file's imports grouped by target module")
    parser.add_argument("--modules", action="store_true", help="also summarise by top-level module")
    parser.add_argument("--quiet", action="store_true", help="print violations and the summary only")
    parser.add_argument("--place", action="append", default=[], metavar="PATH=LAYER",
                        help="judge a file (or a folder/, under src) as if it were in LAYER: a dry run of a move")
    args = parser.parse_args()
    for item in args.place:
        prefix, _, layer = item.partition("=")
        if layer not in ALLOWED:
            print(f"check-imports: unknown layer {layer!r} in --place {item}", file=sys.stderr)
            return 2
        PLACED.append((prefix, layer))
    if not os.path.isdir(args.src):
        print(f"check-imports: no folder {args.src!r}; run from the repository root", file=sys.stderr)
        return 2

    crate = Crate(args.src)
    arrows = [a for f in crate.files for a in arrows_of(crate, f)]
    if args.no_tests:
        arrows = [a for a in arrows if not a.test]

    if args.map:
        print("== imports by file (target module: paths)")
        for f in crate.files:
            groups = defaultdict(set)
            for a in arrows:
                if a.src is f:
                    groups[a.dst.rel.removesuffix(".rs").removesuffix("/mod")].add(a.path + (" [test]" if a.test else ""))
            print(f"{f.rel}  [{label(f)}]")
            for target in sorted(groups):
                print(f"    -> {target}: {', '.join(sorted(groups[target]))}")
        print()

    unknown_files = [f for f in crate.files if f.layer == "unknown"]
    print(f"== {len(crate.files)} files; layers: " + ", ".join(
        f"{layer} {sum(1 for f in crate.files if f.layer == layer)}"
        for layer in list(LAYER_FOLDERS) + list(ROOT_FILES) + ["unknown"]
        if any(f.layer == layer for f in crate.files)))
    if unknown_files:
        print("   in no layer: " + ", ".join(f.rel for f in unknown_files))

    verdicts = [(a, *judge(a)) for a in arrows]
    violations = [(a, why) for a, v, why in verdicts if v == "violation"]
    print(f"\n== violations ({len(violations)} references)")
    for a, why in sorted(violations, key=lambda x: (x[0].src.rel, x[0].line)):
        test = " [test]" if a.test else ""
        print(f"VIOLATION {a.src.rel}:{a.line} [{label(a.src)}] -> {a.dst.rel} [{label(a.dst)}]  {a.path}{test}  ({why})")
    if not args.quiet:
        unplaced = [a for a, v, _ in verdicts if v == "unplaced"]
        print(f"\n== unplaced ({len(unplaced)} references; an end in no layer yet)")
        for a in sorted(unplaced, key=lambda a: (a.src.rel, a.line)):
            print(f"unplaced  {a.src.rel}:{a.line} [{label(a.src)}] -> {a.dst.rel} [{label(a.dst)}]  {a.path}")

    crate_uses = [c for c in CRATE_USES if not (args.no_tests and c.test)]
    by_file = defaultdict(lambda: defaultdict(list))
    for c in crate_uses:
        by_file[c.src.rel][c.crate].append(c.line)
    print(f"\n== external crates a layer must not name ({len(crate_uses)} references in {len(by_file)} files)")
    for rel in sorted(by_file):
        f = next(x for x in crate.files if x.rel == rel)
        named = "; ".join(f"{name} at {','.join(map(str, lines))}" for name, lines in sorted(by_file[rel].items()))
        print(f"CRATE     {rel} [{label(f)}]: {named}")

    found_cycles = cycles(arrows)
    print(f"\n== cycles between files ({len(found_cycles)}; seen through facade re-exports)")
    for comp in found_cycles:
        print("CYCLE " + " <-> ".join(comp))

    def summary(key, title):
        table = defaultdict(lambda: defaultdict(set))
        for a, v, _ in verdicts:
            table[key(a)][v].add((a.src.rel, a.dst.rel))
        print(f"\n== summary by {title}: distinct file arrows (from -> to: ok / violation / unplaced / facade)")
        for (s, d) in sorted(table):
            row = table[(s, d)]
            counts = " / ".join(str(len(row.get(v, ()))) for v in ("ok", "violation", "unplaced", "facade"))
            flag = "  <-- breaks the rule" if row.get("violation") else ""
            print(f"  {s:>22} -> {d:<22} {counts}{flag}")

    summary(lambda a: (a.src.layer, a.dst.layer), "layer")
    if args.modules:
        summary(lambda a: (label(a.src), label(a.dst)), "layer and top module")

    failed = bool(violations) or bool(found_cycles) or bool(crate_uses)
    if args.strict and (unknown_files or any(v == "unplaced" for _, v, _ in verdicts)):
        failed = True
    print(f"\n{'FAIL' if failed else 'OK'}: {len(violations)} violating references, {len(found_cycles)} cycles, "
          f"{len(crate_uses)} forbidden crate references"
          + (f", {len(unknown_files)} files in no layer" if unknown_files else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
