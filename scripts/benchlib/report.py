"""The tables: targets (PASS/MISS), figures beside their baselines, the machine; BENCHMARKS.md's generated block."""
import os, platform, sqlite3, subprocess, time

from .constants import BATCH, BEGIN, CHUNK, END, PRAGMAS_FROM, ROOT
from .measure import log
from .nginx import nginx_version
from .scenarios import PURGE_UPLOAD_EVERY
from .server import rustypaste_version

LOAD_AT_START = ["?"]


def human(mib: int) -> str:
    return f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"


def machine(tmp: str) -> list[tuple[str, str]]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", tmp], capture_output=True, text=True).stdout.strip()
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    curl_version = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return [
        ("CPU", cpu), ("cores", str(os.cpu_count())), ("RAM", f"{mem_kib / 1024 / 1024:.1f} GiB"),
        ("kernel", platform.release()), ("temp folder", f"`{tmp}` ({fs or 'unknown'})"), ("rustc", rustc),
        ("nginx", nginx_version()), ("rustypaste", rustypaste_version()),
        ("curl", " ".join(curl_version.split()[:2])), ("Python sqlite3", f"SQLite {sqlite3.sqlite_version}"),
        ("date", time.strftime("%Y-%m-%d %H:%M %Z")),
        ("load average (1 min) at start / end", f"{LOAD_AT_START[0]} / {os.getloadavg()[0]:.2f}"),
    ]


def over(a: float, b: float) -> float:
    """a / b; a CPU time below the clock tick (10 ms) counts as no time, and anything over it as infinitely more."""
    return a / b if b else float("inf") if a else 1.0


# Bytes a WAL store writes per byte stored (measured 2.05 with 1 MiB commits: once into the WAL, once
# into the database file at the checkpoint), so its disk limit is the `dd` rate over this.
WAL_WRITES = 2.05


def growth_figures(r: dict) -> dict:
    """The growth scenario's ratios: the slowest upload against the first and against raw SQLite
    at the same size, and the steady state (median of the second half) against the disk's dd rate."""
    rows, dd = r["growth"], max(r["growth_dd"])
    later = [(row["rate"] / rows[0]["rate"], i + 1) for i, row in enumerate(rows) if i > 0] or [(1.0, 1)]
    raw = [(row["rate"] / row["raw"], i + 1) for i, row in enumerate(rows)]
    steady_rows = rows[len(rows) // 2:]
    steady = sorted(row["rate"] for row in steady_rows)[len(steady_rows) // 2]
    wal_limit = [(row["rate"] / (dd / WAL_WRITES), i + 1) for i, row in enumerate(rows)]
    return {"vs_first": min(later), "vs_raw": min(raw), "steady": steady, "dd": dd, "vs_dd": steady / dd,
            "vs_wal_limit": min(wal_limit)}


def targets(args, r: dict) -> list[str]:
    """The rows of the target table; each target is a ratio of two figures of this run or a limit."""
    S, L = human(args.small), human(args.large)
    rows = []

    def target(name: str, measured: str, ok: bool) -> None:
        rows.append(f"| {name} | {measured} | {'PASS' if ok else 'MISS'} |")

    for label, size in (("small", S), ("large", L)):
        raw = r[f"raw_insert_{label}"]
        for kind, how in (("put", "`curl -T`"), ("form", "`curl -F`")):
            ratio = r[f"upload_{kind}_{label}"] / raw
            target(f"upload {how} {size} ≥ 0.9x raw SQLite insert", f"{ratio:.2f}x", ratio >= 0.9)
    for label, size in (("small", S), ("large", L)):
        ratio = r[f"upload_form_{label}"] / r[f"upload_put_{label}"]
        target(f"upload `curl -F` {size} ≥ 0.9x `curl -T`", f"{ratio:.2f}x", ratio >= 0.9)
    for kind, how in (("put", "`curl -T`"), ("form", "`curl -F`")):
        ratio = r[f"upload_{kind}_large"] / r[f"upload_{kind}_small"]
        target(f"upload {how} {L} rate ≥ 0.9x the {S} rate", f"{ratio:.2f}x", ratio >= 0.9)
    for label, size in (("small", S), ("large", L)):
        for kind, how in (("put", "`curl -T`"), ("form", "`curl -F`")):
            times = over(r[f"upload_cpu_{kind}_{label}"][0], r[f"raw_cpu_{label}"])
            target(f"upload {how} {size}: server CPU per GiB ≤ 1.3x raw SQLite's", f"{times:.2f}x", times <= 1.3)
    for label, size in (("small", S), ("large", L)):
        ratio = r[f"down_whole_{label}"] / r[f"nginx_whole_{label}"]
        target(f"download {size}, whole file ≥ 0.9x nginx sendfile", f"{ratio:.2f}x", ratio >= 0.9)
        ratio = r[f"down_range_{label}"] / r[f"nginx_range_{label}"]
        target(f"download {size}, middle half (Range) ≥ 0.7x nginx sendfile", f"{ratio:.2f}x", ratio >= 0.7)
        times = over(*r[f"down_cpu_whole_{label}"])
        target(f"download {size}, whole file: CPU per GiB ≤ 2.5x nginx's", f"{times:.2f}x", times <= 2.5)
    for what, key in (("`GET /api/files`", "api"), ("`/files` page", "page")):
        for i, p in ((0, "p50"), (1, "p99")):
            ratio = r[f"{key}_large"][i] / r[f"{key}_tiny"][i]
            target(f"{what} {p} with a {L} file ≤ 1.1x without", f"{ratio:.2f}x", ratio <= 1.1)
    for what, label in (("api", "`GET /api/files`"), ("page", "`/files` page"), ("page by name", "`/files` page by name")):
        first, deep = r["pagination"][f"{what}|first"][0], r["pagination"][f"{what}|cursor"][0]
        target(f"{label}: the last of {args.pagination_files} files' pages (by cursor) ≤ 1.5x the first (p50)",
               f"{deep / first:.2f}x ({deep:.1f} / {first:.1f} ms)", deep <= 1.5 * first)
    n, mib = args.growth
    g = growth_figures(r)
    target(f"growth, {n} x {human(mib)} into one database: every upload ≥ 0.9x the first's rate",
           f"{g['vs_first'][0]:.2f}x (upload {g['vs_first'][1]})", g["vs_first"][0] >= 0.9)
    target("growth: every upload ≥ 0.9x raw SQLite at the same database size",
           f"{g['vs_raw'][0]:.2f}x (upload {g['vs_raw'][1]})", g["vs_raw"][0] >= 0.9)
    target("growth: steady-state rate ≥ 0.75x the disk's `dd conv=fdatasync` rate",
           f"{g['vs_dd']:.2f}x ({g['steady']:.0f} / {g['dd']:.0f} MiB/s)", g["vs_dd"] >= 0.75)
    target(f"growth: every upload ≥ 0.9x the WAL's limit, `dd conv=fdatasync` / {WAL_WRITES} (every byte is written twice)",
           f"{g['vs_wal_limit'][0]:.2f}x (upload {g['vs_wal_limit'][1]}; limit {g['dd'] / WAL_WRITES:.0f} MiB/s)",
           g["vs_wal_limit"][0] >= 0.9)
    ours, theirs = r["paste_ours"], r["paste_theirs"]
    target(f"`curl -F` upload of {L} ahead of rustypaste, to its answer", f"{ours[0] / theirs[0]:.2f}x", ours[0] > theirs[0])
    target(f"`curl -F` upload of {L} ahead of rustypaste, to durable bytes (its answer + `sync -f`)",
           f"{ours[5] / theirs[5]:.2f}x", ours[5] > theirs[5])
    target(f"download of {L} ahead of rustypaste", f"{ours[2] / theirs[2]:.2f}x", ours[2] > theirs[2])
    target("peak RSS through that upload and download < 0.05x rustypaste's",
           f"{ours[4] / theirs[4]:.3f}x ({ours[4]:.0f} / {theirs[4]:.0f} MiB)", ours[4] < 0.05 * theirs[4])
    if "encrypted_client" in r:
        e = r["encrypted_client"]
        for what, enc, plain in (("upload --encrypt", "put_enc", "put"), ("get LINK#KEY", "get_enc", "get")):
            ratio = e[enc] / e[plain]
            target(f"client `{what}` of {human(args.encrypt_mib)} ≥ 0.9x the plain `{plain.replace('put', 'upload')}`",
                   f"{ratio:.2f}x", ratio >= 0.9)
    if "encrypted_page" in r:
        e = r["encrypted_page"]
        for what, enc, plain in (("upload", "put_enc", "put"), ("download", "get_enc", "get")):
            ratio = e[enc] / e[plain]
            target(f"page: encrypting {what} of {human(args.encrypt_mib)} in Chromium ≥ 0.5x the plain {what}",
                   f"{ratio:.2f}x", ratio >= 0.5)
    target(f"peak RSS through a {L} upload ≤ 64 MiB", f"{r['rss_upload']:.0f} MiB", r["rss_upload"] <= 64)
    target(f"peak RSS through {args.clients} concurrent downloads of {S} ≤ 64 MiB", f"{r['rss_downloads']:.0f} MiB",
           r["rss_downloads"] <= 64)
    for key, how in (("rss_guests", "`curl -T`"), ("rss_guest_forms", "`curl -F`")):
        target(f"peak RSS through {args.guest_uploads} concurrent guest uploads ({how}) of {args.guest_upload_size} MiB "
               "≤ 128 MiB", f"{r[key]:.0f} MiB", r[key] <= 128)
    target(f"1 KiB upload during a {L} upload, p99 ≤ 50 ms", f"{r['small_upload'][1]:.1f} ms", r["small_upload"][1] <= 50)
    target(f"1 KiB upload while {args.purge_files} x {L} deleted are purged, p99 ≤ 50 ms", f"{r['purge'][1]:.1f} ms",
           r["purge"][1] <= 50)
    return rows


def uploads_section(args, r: dict) -> list[str]:
    S, L = human(args.small), human(args.large)
    out = ["### Uploads", "", "Each upload goes to a fresh server on a fresh database. The baseline is Python's "
           f"sqlite3 inserting the same file in {CHUNK // 1024} KiB chunks, {BATCH} per INSERT, one transaction each, "
           f"with the server's schema, page size and pragmas (read from `{os.path.relpath(PRAGMAS_FROM, ROOT)}`), "
           "then reading it back in the same batches.", "",
           "| size | raw SQLite insert MiB/s | `curl -T` MiB/s | ratio | `curl -F` MiB/s | ratio |",
           "|---|---:|---:|---:|---:|---:|"]
    for label, size in (("small", S), ("large", L)):
        raw = r[f"raw_insert_{label}"]
        put, form = r[f"upload_put_{label}"], r[f"upload_form_{label}"]
        out.append(f"| {size} | {raw:.0f} | {put:.0f} | {put / raw:.2f} | {form:.0f} | {form / raw:.2f} |")
    out += ["", "CPU seconds per GiB stored (user + system): what each path costs the machine, whatever else runs on it. "
            "The server's pipeline (socket, chunking, SHA-256, SQLite) runs on several threads and shares the cores "
            "with curl; raw SQLite is one thread alone.", "",
            "| size | raw SQLite | server, `curl -T` | curl -T | server, `curl -F` | curl -F |", "|---|---:|---:|---:|---:|---:|"]
    for label, size in (("small", S), ("large", L)):
        (sp, cp), (sf, cf) = r[f"upload_cpu_put_{label}"], r[f"upload_cpu_form_{label}"]
        out.append(f"| {size} | {r[f'raw_cpu_{label}']:.2f} | {sp:.2f} | {cp:.2f} | {sf:.2f} | {cf:.2f} |")
    return out + [""]


def downloads_section(args, r: dict) -> list[str]:
    S, L = human(args.small), human(args.large)
    out = ["### Downloads", "", "`curl -o /dev/null` on loopback, page cache warm for both servers; nginx serves "
           "the same bytes from a plain file with sendfile. Range: the middle half of the file. Raw SQLite reads "
           "the whole file back in the batches downloads use.", "",
           "| file | part | raw SQLite read MiB/s | raw SQLite CPU s/GiB | blobdrop MiB/s | nginx MiB/s | blobdrop / nginx | "
           "blobdrop CPU s/GiB | nginx CPU s/GiB |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, size in (("small", S), ("large", L)):
        for kind in ("whole", "range"):
            ours, theirs = r[f"down_{kind}_{label}"], r[f"nginx_{kind}_{label}"]
            # Without the raw scenario in the run (`--only downloads`), its columns stay empty.
            measured_raw = kind == "whole" and f"raw_read_{label}" in r
            raw = f"{r[f'raw_read_{label}']:.0f} | {r[f'raw_read_cpu_{label}']:.2f}" if measured_raw else " | "
            cpu, nginx_cpu = r[f"down_cpu_{kind}_{label}"]
            out.append(f"| {size} | {kind} | {raw} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f} | {cpu:.2f} "
                       f"| {nginx_cpu:.2f} |")
    return out + [""]


def listings_section(args, r: dict) -> list[str]:
    out = ["### Listings", "", f"{args.requests} sequential requests on one keep-alive connection to each of "
           f"two servers, taking turns: both hold {args.files} files of 100 bytes, but on the second one of them is a "
           f"{human(args.large)} file.", "",
           "| request | p50 ms | p99 ms | p50 with the large file | p99 with the large file |",
           "|---|---:|---:|---:|---:|"]
    for what, key in (("`GET /api/files`", "api"), ("`GET /files` (signed in)", "page")):
        (a50, a99), (b50, b99) = r[f"{key}_tiny"], r[f"{key}_large"]
        out.append(f"| {what} | {a50:.2f} | {a99:.2f} | {b50:.2f} | {b99:.2f} |")
    return out + [""]


def pagination_section(args, r: dict) -> list[str]:
    figures = r["pagination"]
    out = ["### Pages deep in the listing", "", f"{args.pagination_files} files (rows straight into the files table), "
           f"{args.requests} sequential requests of each on one keep-alive connection, taking turns: the first page "
           "and the last one (50 files a page), reached by the cursor of a Next link and by the deprecated offset.", "",
           "| listing | first page p50 / p99 ms | last page by cursor p50 / p99 ms | cursor / first (p50) "
           "| last page by offset p50 / p99 ms |", "|---|---:|---:|---:|---:|"]
    for what, label in (("api", "`GET /api/files?limit=50`"), ("page", "`GET /files`, newest first"),
                        ("page by name", "`GET /files?sort=name`")):
        f50, f99 = figures[f"{what}|first"]
        c50, c99 = figures[f"{what}|cursor"]
        offset = figures.get(f"{what}|offset")
        by_offset = f"{offset[0]:.1f} / {offset[1]:.1f}" if offset else ""
        out.append(f"| {label} | {f50:.1f} / {f99:.1f} | {c50:.1f} / {c99:.1f} | {c50 / f50:.2f} | {by_offset} |")
    return out + [""]


def growth_section(args, r: dict) -> list[str]:
    n, mib = args.growth
    g = growth_figures(r)
    dd = r["growth_dd"]
    out = ["### Growth", "", f"{n} uploads (`curl -T`) of the same {human(mib)} file in a row into one database, each "
           "after raw SQLite has stored the same file into a database of its own that grows alike (same schema, "
           "batches and pragmas). `sync` runs after each, and its time is what was still dirty in the page cache. "
           "Written per byte: /proc/PID/io `write_bytes` over the bytes stored (the WAL, then the database). "
           f"The disk: `dd bs=1M count={r['growth_dd_mib']} conv=fdatasync` on the same folder, {dd[0]:.0f} MiB/s before and "
           f"{dd[1]:.0f} MiB/s after. Steady state: the median of the second half, {g['steady']:.0f} MiB/s, "
           f"{g['vs_dd']:.2f}x the faster dd.", "",
           "| upload | database after | blobdrop MiB/s | raw SQLite MiB/s | blobdrop / raw | / first upload "
           "| blobdrop CPU s/GiB | raw SQLite CPU s/GiB | written per byte, blobdrop · raw | WAL after, MiB "
           "| `sync` after, s: blobdrop · raw |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    first = r["growth"][0]["rate"]
    for i, row in enumerate(r["growth"]):
        out.append(f"| {i + 1} | {row['db']:.1f} GiB | {row['rate']:.0f} | {row['raw']:.0f} | {row['rate'] / row['raw']:.2f} "
                   f"| {row['rate'] / first:.2f} | {row['cpu']:.2f} | {row['raw_cpu']:.2f} "
                   f"| {row['written']:.2f} · {row['raw_written']:.2f} | {row['wal']:.0f} "
                   f"| {row['sync']:.1f} · {row['raw_sync']:.1f} |")
    return out + [""]


def journal_section(args, r: dict) -> list[str]:
    out = ["### Journal mode", "",
           f"Raw SQLite storing the {human(args.large)} file with the server's pragmas, in WAL and with a rollback journal, "
           f"in turns, each into a fresh database holding the {human(args.small)} file, which a second process reads "
           "in download batches all the while; medians of "
           f"{args.runs}. A rollback journal writes appended pages once, but its writer locks readers out at each commit.",
           "", "| journal | write MiB/s | write CPU s/GiB | written per byte | reader meanwhile MiB/s | reader's slowest batch, ms |",
           "|---|---:|---:|---:|---:|---:|"]
    for label, (rate, cpu, written, read, slowest) in r["journal"].items():
        out.append(f"| {label} | {rate:.0f} | {cpu:.2f} | {written:.2f} | {read:.0f} | {slowest:.1f} |")
    return out + [""]


def rustypaste_section(args, r: dict) -> list[str]:
    ours, theirs = r["paste_ours"], r["paste_theirs"]
    out = ["### Side by side with rustypaste", "", f"The {human(args.large)} file, `curl -F` up and `curl -o /dev/null` "
           f"down, to blobdrop and to rustypaste ({rustypaste_version()}, no auth, its files in a folder on the same "
           f"disk) in turns, each run on a fresh process and folder; medians of {args.runs}, peak RSS the highest.", "",
           "| | blobdrop | rustypaste | blobdrop / rustypaste |", "|---|---:|---:|---:|"]
    for i, (what, fmt) in enumerate((("upload `curl -F`, MiB/s", ".0f"), ("upload, server CPU s/GiB", ".2f"),
                                      ("download, MiB/s", ".0f"), ("download, server CPU s/GiB", ".2f"),
                                      ("peak RSS (VmHWM), MiB", ".0f"),
                                      ("upload to durable bytes, MiB/s (rustypaste: answer + `sync -f`)", ".0f"))):
        out.append(f"| {what} | {ours[i]:{fmt}} | {theirs[i]:{fmt}} | {over(ours[i], theirs[i]):.2f} |")
    return out + [""]


def small_uploads_section(args, r: dict) -> list[str]:
    rows = r.get("small_uploads")
    if not rows:
        return []
    whos = list(next(iter(rows.values())))
    names = {"blobdrop": "blobdrop", "before": f"blobdrop at `{args.before}`", "rustypaste": rustypaste_version()}
    out = ["### Small uploads", "", f"Uploads per second, multipart as `curl -F` sends them, each client on one "
           f"keep-alive connection uploading one file after another for {args.small_seconds:g} s, each figure on a "
           "fresh process and database, taking turns. blobdrop syncs each upload's commits before its 201 "
           "(`synchronous=FULL`): " + ("the build before that (`--before`) shows what the syncs cost. " if "before" in whos
                                        else "run with `--before REV` to see what the syncs cost. ")
           + "rustypaste syncs nothing.", "",
           "| size | clients | " + " | ".join(names[w] for w in whos) + " | "
           + " | ".join(f"blobdrop / {w}" for w in whos if w != "blobdrop") + " |",
           "|---|---:|" + "---:|" * (2 * len(whos) - 1)]
    for (label, clients), figures in rows.items():
        ours = figures["blobdrop"]
        out.append(f"| {label} | {clients} | " + " | ".join(f"{figures[w]:.0f}" for w in whos) + " | "
                   + " | ".join(f"{ours / figures[w]:.2f}x" for w in whos if w != "blobdrop") + " |")
    return out + [""]


def memory_section(args, r: dict) -> list[str]:
    L, S = human(args.large), human(args.small)
    return ["### Memory and latency under load", "",
            f"- Peak RSS (VmHWM) of the server through a {L} upload: {r['rss_upload']:.0f} MiB (highest of {args.runs}).",
            f"- Peak RSS of a freshly started server through {args.clients} concurrent downloads of the {S} file: "
            f"{r['rss_downloads']:.0f} MiB.",
            f"- Peak RSS of a freshly started server through {args.guest_uploads} concurrent `curl -T` uploads of "
            f"{args.guest_upload_size} MiB through one guest link (per-link and per-address limits raised to "
            f"{args.guest_uploads}): {r['rss_guests']:.0f} MiB; answers {r['guest_codes']}. The same with `curl -F`: "
            f"{r['rss_guest_forms']:.0f} MiB; answers {r['guest_form_codes']}.",
            f"- {args.small_uploads} sequential 1 KiB uploads while a {L} upload runs: p50 {r['small_upload'][0]:.1f} ms, "
            f"p99 {r['small_upload'][1]:.1f} ms" + ("" if r["big_still_running"] else
                                                     " (the large upload ended before the last small one)") + ".",
            f"- {r['purge'][3]} 1 KiB uploads, one started every {PURGE_UPLOAD_EVERY * 1000:.0f} ms, while "
            f"{args.purge_files} deleted files of {L} were purged and a kept {S} file uploaded after them moved "
            f"down ({r['purge'][4]:.0f} s from the deletes until the clean-up had given every page back): p50 "
            f"{r['purge'][0]:.1f} ms, p99 {r['purge'][1]:.1f} ms, max {r['purge'][2]:.1f} ms."]


def encrypted_client_lines(args, r: dict) -> list[str]:
    e = r["encrypted_client"]
    return [f"blobdrop client, {args.encrypt_mib} MiB, medians of {args.runs} pairs: `upload` {e['put']:.0f} MiB/s, "
            f"`upload --encrypt` {e['put_enc']:.0f} MiB/s: {e['put_enc'] / e['put']:.2f}x (target >= 0.9x; client CPU "
            f"{e['cpu_put']:.2f} s and {e['cpu_put_enc']:.2f} s); `get` {e['get']:.0f} MiB/s, `get LINK#KEY` "
            f"{e['get_enc']:.0f} MiB/s: {e['get_enc'] / e['get']:.2f}x (target >= 0.9x)"]


def encrypted_page_lines(args, r: dict) -> list[str]:
    e = r["encrypted_page"]
    return [f"the page in headless Chromium, {args.encrypt_mib} MiB, medians of {args.runs}: upload {e['put']:.0f} MiB/s, "
            f"encrypting upload {e['put_enc']:.0f} MiB/s: {e['put_enc'] / e['put']:.2f}x (target >= 0.5x; peak JS heap "
            f"{e['heap_put']:.0f} and {e['heap_put_enc']:.0f} MiB); download {e['get']:.0f} MiB/s, decrypting download "
            f"{e['get_enc']:.0f} MiB/s: {e['get_enc'] / e['get']:.2f}x (target >= 0.5x; peak JS heap {e['heap_get']:.0f} "
            f"and {e['heap_get_enc']:.0f} MiB)"]


def command_line(args) -> str:
    n, mib = args.growth
    return (f"scripts/bench --small {args.small} --large {args.large} --runs {args.runs} --files {args.files} "
            f"--growth {n}x{mib}" + (f" --before {args.before}" if args.before else ""))


def report(args, r: dict, machine_rows: list[tuple[str, str]]) -> str:
    rows = targets(args, r)
    passed = sum(row.endswith("PASS |") for row in rows)
    out = [f"## Latest run: {passed} of {len(rows)} targets met", ""]
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in machine_rows]
    out += ["", f"`{command_line(args)}` took {r['minutes']:.1f} min. Throughputs are medians of {args.runs} runs; "
            "ratios compare figures of this same run; CPU seconds per GiB are user + system time of the serving "
            "process (raw SQLite: of this script) over the bytes moved.", ""]
    out += ["### Targets", "", "| target | measured | |", "|---|---:|---|", *rows, ""]
    for section in (uploads_section, downloads_section, listings_section, pagination_section, growth_section,
                    journal_section,
                    rustypaste_section, small_uploads_section, memory_section):
        out += section(args, r)
    out += ["", bench_formats()]
    return "\n".join(out) + "\n"


def bench_formats() -> str:
    formats = os.path.join(ROOT, "scripts/bench-formats")
    if not os.access(formats, os.X_OK):
        return "_scripts/bench-formats is not there (or not executable): the listing-format comparison was skipped._"
    log("scripts/bench-formats ...")
    done = subprocess.run([formats], cwd=ROOT, capture_output=True, text=True)
    return (done.stdout.strip() if done.returncode == 0 else
            f"_scripts/bench-formats failed with exit code {done.returncode}:_ `{done.stderr.strip()[-300:]}`")


def summary(name: str, args, r: dict) -> str:
    """What `--only NAME` prints: the scenario's own lines, BENCHMARKS.md untouched."""
    if name == "guests":
        return "\n".join(f"peak RSS through {args.guest_uploads} concurrent guest uploads of {args.guest_upload_size} MiB "
                         f"with {how}: {r[rss]:.0f} MiB; answers {r[codes]}"
                         for how, rss, codes in (("curl -T", "rss_guests", "guest_codes"),
                                                 ("curl -F", "rss_guest_forms", "guest_form_codes")))
    if name == "purge":
        p50, p99, high, n, seconds = r["purge"]
        return (f"{n} 1 KiB uploads, one per {PURGE_UPLOAD_EVERY * 1000:.0f} ms, while {args.purge_files} x {args.large} MiB "
                f"were purged and {args.small} MiB kept moved down ({seconds:.1f} s): "
                f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {high:.1f} ms")
    if name == "tus":
        plain, resumable, finish, per_curl, waits, patches = r["tus"]
        return (f"upload of {args.tus_mib} MiB, medians of {args.runs} pairs: curl -T {plain:.0f} MiB/s, tus in {args.tus_patch} MiB "
                f"PATCHes on one connection {resumable:.0f} MiB/s: {resumable / plain:.2f}x (target >= 0.9x); the last PATCH "
                f"answered {finish * 1000:.0f} ms after its last byte (target < 1 s); the {patches} PATCHes waited "
                f"{waits:.2f} s in all after their last byte; one curl per PATCH (the harness before): {per_curl:.0f} MiB/s "
                f"({per_curl / plain:.2f}x)")
    if name == "encrypted_client":
        return "\n".join(encrypted_client_lines(args, r))
    if name == "encrypted_page":
        return "\n".join(encrypted_page_lines(args, r))
    if name == "share_zip":
        one, zipped = r["share_zip"]
        return (f"download of {args.share_mib} MiB, medians of {args.runs}: one file {one:.0f} MiB/s, the zip of a share "
                f"of {args.share_files} files of the same bytes {zipped:.0f} MiB/s: {zipped / one:.2f}x (target >= 0.9x)")
    if name == "share_names":
        made, first, second = r["share_names"]
        return (f"a share of {args.share_names} files all named photo.jpg: made in {made:.2f} s, the first HEAD of its zip "
                f"(laid out, duplicates renamed) {first:.2f} s, the second (cached) {second:.3f} s")
    sections = {"raw": None, "uploads": uploads_section, "downloads": downloads_section, "listings": listings_section,
                "pagination": pagination_section,
                "growth": growth_section, "journal": journal_section, "rustypaste": rustypaste_section,
                "small_uploads": small_uploads_section}
    if sections.get(name):
        return "\n".join(sections[name](args, r))
    return "\n".join(f"{key}: {value}" for key, value in sorted(r.items()))


def write_section(path: str, section: str) -> None:
    """Replaces what lies between the markers, keeping the rest (the hand-written tuning log)."""
    old = open(path).read() if os.path.exists(path) else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
    else:
        head, tail = "# Benchmarks\n\nWritten by `scripts/bench`; the tuning log below it is kept.\n\n", "\n" + old
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{section}{END}{tail}")
