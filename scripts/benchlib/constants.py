"""What the benchmark shares with the server, read from the Rust source so the two never disagree.

The chunk size, the chunks per INSERT and the connection pragmas are found by pattern anywhere under
`src/` and the workspace's crates, `crates/*/src/` (files move; names stay). Whatever is not found stops the benchmark with the pattern it
looked for: a baseline with other settings than the server's would compare nothing.
"""
import glob, os, re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Another build to measure in its place (an A/B pair: `BLOBDROP_BENCH_BINARY=... scripts/bench --no-build`).
BINARY = os.environ.get("BLOBDROP_BENCH_BINARY") or os.path.join(ROOT, "target/release/blobdrop")
SECRET = "bench-secret"
AUTH = {"Authorization": f"Bearer {SECRET}"}
MIB = 1024 * 1024
BEGIN, END = "<!-- scripts/bench: begin -->", "<!-- scripts/bench: end -->"

# The pragmas the raw-SQLite baseline must set as the server does; each must be found in the source.
REQUIRED_PRAGMAS = ("page_size", "auto_vacuum", "journal_mode", "synchronous", "foreign_keys", "busy_timeout",
                    "wal_autocheckpoint")


def _sources() -> dict[str, str]:
    """Every Rust file under src/ and crates/*/src/, without its comments (a comment naming a pragma
    sets nothing)."""
    comment = re.compile(r"(?<![:\"])//.*$", re.MULTILINE)
    paths = glob.glob(os.path.join(ROOT, "src", "**", "*.rs"), recursive=True)
    paths += glob.glob(os.path.join(ROOT, "crates", "*", "src", "**", "*.rs"), recursive=True)
    return {path: comment.sub("", open(path).read()) for path in sorted(paths)}


SOURCES = _sources()


def _where(path: str) -> str:
    return os.path.relpath(path, ROOT)


def _eval_int(expr: str) -> int:
    """An integer constant expression as the source writes it: `32 * 1024`, `16_384`, `250`."""
    expr = expr.strip().replace("_", "")
    if not re.fullmatch(r"[0-9\s*+()]+", expr):
        raise ValueError(expr)
    return int(eval(expr, {"__builtins__": {}}))  # digits and * + ( ) only, checked above


def const(name: str, near: str | None = None) -> tuple[str, str]:
    """The right-hand side of `const NAME: T = ...;` (pub or not) and the file it is in: the one
    under src/, or the one in the file `near` when several files have a constant of that name."""
    pattern = re.compile(rf"\bconst\s+{name}\s*:\s*[^=]+=\s*([^;]+);")
    found = [(m.group(1).strip(), path) for path, text in SOURCES.items() for m in pattern.finditer(text)]
    if len(found) > 1 and near:
        found = [(expr, path) for expr, path in found if path == near]
    if len(found) != 1:
        raise SystemExit(f"scripts/bench: expected one `const {name}` under src/, found {len(found)}: "
                         f"{[_where(p) for _, p in found]}")
    return found[0]


def int_const(name: str) -> int:
    expr, path = const(name)
    try:
        return _eval_int(expr)
    except ValueError:
        raise SystemExit(f"scripts/bench: `const {name}` in {_where(path)} is `{expr}`, not an integer expression")


def _value(pragma: str, expr: str, near: str) -> str | None:
    """A pragma's value in SQL from the Rust expression that sets it in the file `near`."""
    expr = re.sub(r"\.to_(string|owned)\(\)$", "", expr.strip())  # ("journal_mode", "WAL".to_string())
    if m := re.fullmatch(r'"([^"]*)"', expr):
        return m.group(1)
    if m := re.fullmatch(r"Sqlite\w+::(\w+)", expr):  # SqliteJournalMode::Wal, SqliteSynchronous::Normal
        return m.group(1).upper()
    if expr in ("true", "false"):
        return "ON" if expr == "true" else "OFF"
    if m := re.fullmatch(r"Duration::from_(secs|millis)\((.+)\)", expr):
        return str(_eval_int(m.group(2)) * (1000 if m.group(1) == "secs" else 1))
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", expr):
        inner, _ = const(expr, near)
        return _value(pragma, inner, near)
    try:
        return str(_eval_int(expr))
    except ValueError:
        pass
    # A value from the store's options (`store_options.wal_autocheckpoint.to_string()`): its
    # default is the constant of the pragma's own name. Without one it is a setting that is off
    # by default (`max_page_count` from BLOBDROP_MAX_DB_SIZE): None, not set.
    if re.search(rf"\bconst\s+{pragma.upper()}\s*:", "\n".join(SOURCES.values())):
        return _value(pragma, pragma.upper(), near)
    return None


def _pragmas() -> tuple[dict[str, str], str]:
    """The server's connection pragmas, from the code that sets `journal_mode` on its connections:
    either a table of `("name", value)` pairs or sqlx's `SqliteConnectOptions` builder chain."""
    table = re.compile(r'\(\s*"(\w+)"\s*,\s*([^()]+?|[^()]*\([^()]*\)[^()]*?)\s*\)')
    builder = re.compile(r"\.(page_size|auto_vacuum|journal_mode|synchronous|foreign_keys|busy_timeout)\(\s*([^()]*(?:\([^()]*\))?)\s*\)"
                         r'|\.pragma\(\s*"(\w+)"\s*,\s*([^;]*?)\)\s*(?=[.;\n])')
    for path, text in SOURCES.items():
        for block in re.split(r"\n(?=\S)", text):  # top-level items: a function or a const table
            if "journal_mode" not in block:
                continue
            found: dict[str, str] = {}
            if "SqliteConnectOptions" in block and ".journal_mode(" in block:
                for m in builder.finditer(block):
                    name, expr = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                    if (value := _value(name, expr, path)) is not None:
                        found.setdefault(name, value)
            else:
                # Only the pragmas every connection shares: a table by role also holds the readers' own.
                for m in table.finditer(block):
                    if m.group(1) not in REQUIRED_PRAGMAS:
                        continue
                    if (value := _value(m.group(1), m.group(2), path)) is not None:
                        found.setdefault(m.group(1), value)
            if all(p in found for p in ("journal_mode", "synchronous")):
                return found, path
    raise SystemExit("scripts/bench: found no connection pragmas under src/ (a table of (\"journal_mode\", ...) "
                     "pairs or a SqliteConnectOptions chain with .journal_mode(...))")


CHUNK = int_const("CHUNK_SIZE")
BATCH = int_const("WRITE_BATCH_CHUNKS")  # chunks per INSERT
PRAGMAS, PRAGMAS_FROM = _pragmas()
_missing = [p for p in REQUIRED_PRAGMAS if p not in PRAGMAS]
if _missing:
    raise SystemExit(f"scripts/bench: the pragmas in {_where(PRAGMAS_FROM)} lack {_missing} (found {PRAGMAS})")
PAGE_SIZE = int(PRAGMAS["page_size"])
WAL_AUTOCHECKPOINT = int(PRAGMAS["wal_autocheckpoint"])


def pragma_statements() -> list[str]:
    """The pragmas in the order SQLite needs them: page_size and auto_vacuum before journal_mode."""
    first = [p for p in ("page_size", "auto_vacuum") if p in PRAGMAS]
    rest = [p for p in PRAGMAS if p not in first]
    return [f"{p}={PRAGMAS[p]}" for p in first + rest]
