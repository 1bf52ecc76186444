"""The tables: targets (PASS/MISS), figures beside their baselines, the machine; BENCHMARKS.md's generated block."""
import os, platform, sqlite3, subprocess, time

from .constants import BATCH, BEGIN, END, ROOT
from .measure import log
from .nginx import nginx_version
from .scenarios import PURGE_UPLOAD_EVERY

LOAD_AT_START = ["?"]


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
        ("nginx", nginx_version()), ("curl", " ".join(curl_version.split()[:2])),
        ("Python sqlite3", f"SQLite {sqlite3.sqlite_version}"),
        ("date", time.strftime("%Y-%m-%d %H:%M %Z")),
        ("load average (1 min) at start / end", f"{LOAD_AT_START[0]} / {os.getloadavg()[0]:.2f}"),
    ]


def report(args, r: dict, machine_rows: list[tuple[str, str]]) -> str:
    s, l = args.small, args.large
    size = lambda mib: f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"
    S, L = size(s), size(l)
    rows = []  # (target, measured, pass)

    def target(name: str, measured: str, ok: bool) -> None:
        rows.append(f"| {name} | {measured} | {'PASS' if ok else 'MISS'} |")

    for label, human in (("small", S), ("large", L)):
        raw = r[f"raw_insert_{label}"]
        for kind, how in (("put", "`curl -T`"), ("form", "`curl -F`")):
            ratio = r[f"upload_{kind}_{label}"] / raw
            target(f"upload {how} {human} ≥ 0.9x raw SQLite insert", f"{ratio:.2f}x", ratio >= 0.9)
    for kind, how in (("put", "`curl -T`"), ("form", "`curl -F`")):
        ratio = r[f"upload_{kind}_large"] / r[f"upload_{kind}_small"]
        target(f"upload {how} {L} rate ≥ 0.9x the {S} rate", f"{ratio:.2f}x", ratio >= 0.9)
    for label, human in (("small", S), ("large", L)):
        for kind in ("whole", "range"):
            ratio = r[f"down_{kind}_{label}"] / r[f"nginx_{kind}_{label}"]
            what = "whole file" if kind == "whole" else "middle half (Range)"
            target(f"download {human}, {what} ≥ 0.7x nginx sendfile", f"{ratio:.2f}x", ratio >= 0.7)
    for what, key in (("`GET /api/files`", "api"), ("`/files` page", "page")):
        for i, p in ((0, "p50"), (1, "p99")):
            ratio = r[f"{key}_large"][i] / r[f"{key}_tiny"][i]
            target(f"{what} {p} with a {L} file ≤ 1.1x without", f"{ratio:.2f}x", ratio <= 1.1)
    target(f"peak RSS through a {L} upload ≤ 64 MiB", f"{r['rss_upload']:.0f} MiB", r["rss_upload"] <= 64)
    target(f"peak RSS through {args.clients} concurrent downloads of {S} ≤ 64 MiB", f"{r['rss_downloads']:.0f} MiB",
           r["rss_downloads"] <= 64)
    for key, how in (("rss_guests", "`curl -T`"), ("rss_guest_forms", "`curl -F`")):
        target(f"peak RSS through {args.guest_uploads} concurrent guest uploads ({how}) of {args.guest_upload_size} MiB "
               "≤ 128 MiB", f"{r[key]:.0f} MiB", r[key] <= 128)
    target(f"1 KiB upload during a {L} upload, p99 ≤ 100 ms", f"{r['small_upload'][1]:.1f} ms",
           r["small_upload"][1] <= 100)
    purged = f"{args.purge_files} x {L}"
    target(f"1 KiB upload while {purged} deleted are purged, p99 ≤ 50 ms", f"{r['purge'][1]:.1f} ms", r["purge"][1] <= 50)
    passed = sum(row.endswith("PASS |") for row in rows)

    out = [f"## Latest run: {passed} of {len(rows)} targets met", ""]
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in machine_rows]
    out += ["", f"`scripts/bench --small {s} --large {l} --runs {args.runs} --files {args.files}` "
            f"took {r['minutes']:.1f} min. Throughputs are medians of {args.runs} runs; ratios compare figures "
            "of this same run.", ""]
    out += ["### Targets", "", "| target | measured | |", "|---|---:|---|", *rows, ""]
    out += ["### Uploads", "", "Each upload goes to a fresh server on a fresh database. The baseline is Python's "
            f"sqlite3 inserting the same file in 32 KiB chunks, {BATCH} per INSERT, one transaction each, with the "
            "server's schema, page size and pragmas, then reading it back in the same batches.", "",
            "| size | raw SQLite insert MiB/s | `curl -T` MiB/s | ratio | `curl -F` MiB/s | ratio |",
            "|---|---:|---:|---:|---:|---:|"]
    for label, human in (("small", S), ("large", L)):
        raw = r[f"raw_insert_{label}"]
        put, form = r[f"upload_put_{label}"], r[f"upload_form_{label}"]
        out.append(f"| {human} | {raw:.0f} | {put:.0f} | {put / raw:.2f} | {form:.0f} | {form / raw:.2f} |")
    out += ["", "CPU seconds per GiB stored (user + system): what each path costs the machine, whatever else runs on it. "
            "The server's pipeline (socket, chunking, SHA-256, SQLite) runs on several threads and shares the cores "
            "with curl; raw SQLite is one thread alone.", "",
            "| size | raw SQLite | server, `curl -T` | curl -T | server, `curl -F` | curl -F |", "|---|---:|---:|---:|---:|---:|"]
    for label, human in (("small", S), ("large", L)):
        (sp, cp), (sf, cf) = r[f"upload_cpu_put_{label}"], r[f"upload_cpu_form_{label}"]
        out.append(f"| {human} | {r[f'raw_cpu_{label}']:.2f} | {sp:.2f} | {cp:.2f} | {sf:.2f} | {cf:.2f} |")
    out += ["", "### Downloads", "", "`curl -o /dev/null` on loopback, page cache warm for both servers; nginx serves "
            "the same bytes from a plain file with sendfile. Range: the middle half of the file.", "",
            "| file | part | raw SQLite read MiB/s | blobdrop MiB/s | nginx MiB/s | blobdrop / nginx | "
            "blobdrop CPU s/GiB | nginx CPU s/GiB |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for label, human in (("small", S), ("large", L)):
        for kind in ("whole", "range"):
            ours, theirs = r[f"down_{kind}_{label}"], r[f"nginx_{kind}_{label}"]
            raw = f"{r[f'raw_read_{label}']:.0f}" if kind == "whole" else ""
            cpu, nginx_cpu = r[f"down_cpu_{kind}_{label}"]
            out.append(f"| {human} | {kind} | {raw} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f} | {cpu:.2f} "
                       f"| {nginx_cpu:.2f} |")
    out += ["", "### Listings", "", f"{args.requests} sequential requests on one keep-alive connection to each of "
            f"two servers, taking turns: both hold {args.files} files of 100 bytes, but on the second one of them is a {L} file.",
            "",
            "| request | p50 ms | p99 ms | p50 with the large file | p99 with the large file |",
            "|---|---:|---:|---:|---:|"]
    for what, key in (("`GET /api/files`", "api"), ("`GET /files` (signed in)", "page")):
        (a50, a99), (b50, b99) = r[f"{key}_tiny"], r[f"{key}_large"]
        out.append(f"| {what} | {a50:.2f} | {a99:.2f} | {b50:.2f} | {b99:.2f} |")
    out += ["", "### Memory and latency under load", "",
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
    formats = os.path.join(ROOT, "scripts/bench-formats")
    out.append("")
    if os.access(formats, os.X_OK):
        log("scripts/bench-formats ...")
        done = subprocess.run([formats], cwd=ROOT, capture_output=True, text=True)
        out.append(done.stdout.strip() if done.returncode == 0 else
                   f"_scripts/bench-formats failed with exit code {done.returncode}:_ `{done.stderr.strip()[-300:]}`")
    else:
        out.append("_scripts/bench-formats is not there (or not executable): the listing-format comparison was skipped._")
    return "\n".join(out) + "\n"


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
