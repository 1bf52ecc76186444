#!/usr/bin/env python3
"""Measure how SQLite's page size affects storing and reading 32 KiB chunks.

Uses blobdrop's pragmas and batch shape (several chunks per INSERT, one short
transaction per batch) without any HTTP, so the numbers show SQLite alone.
Usage: scripts/page-size.py [MiB per run, default 512] [runs, default 3]
"""
import os, sqlite3, statistics, sys, tempfile, time

CHUNK = 32 * 1024
BATCH = 32  # chunks per INSERT statement
PAGE_SIZES = [4096, 8192, 16384, 32768, 65536]


def run(page_size: int, mib: int, folder: str) -> tuple[float, float, float]:
    path = os.path.join(folder, f"p{page_size}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA page_size={page_size}")
    db.execute("PRAGMA auto_vacuum=INCREMENTAL")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE c (file_id TEXT NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (file_id, idx))")
    # Distinct bytes per chunk (a 64 MiB pool), as a real upload has: one chunk inserted over and
    # over would stay in the CPU cache and flatter SQLite.
    pool = os.urandom(64 * 1024 * 1024)
    pool_chunks = len(pool) // CHUNK
    chunks = mib * 1024 * 1024 // CHUNK
    sql = "INSERT INTO c VALUES " + ",".join(["(?,?,?)"] * BATCH)
    start = time.perf_counter()
    for first in range(0, chunks, BATCH):
        params = []
        for idx in range(first, first + BATCH):
            at = (idx % pool_chunks) * CHUNK
            params += ["f", idx, pool[at:at + CHUNK]]
        db.execute(sql, params)
    write = mib / (time.perf_counter() - start)
    start = time.perf_counter()
    for first in range(0, chunks, BATCH):
        rows = db.execute("SELECT data FROM c WHERE file_id='f' AND idx BETWEEN ? AND ?", (first, first + BATCH - 1)).fetchall()
        assert len(rows) == BATCH
    read = mib / (time.perf_counter() - start)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    overhead = os.path.getsize(path) / (mib * 1024 * 1024)
    os.remove(path)
    return write, read, overhead


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    folder = tempfile.mkdtemp(dir=os.environ.get("TMPDIR", "/var/tmp"))
    print(f"{mib} MiB of 32 KiB chunks, {BATCH} per INSERT, median of {runs} runs")
    print("| page size | insert MiB/s | read MiB/s | file size / data |")
    print("|---:|---:|---:|---:|")
    for page_size in PAGE_SIZES:
        results = [run(page_size, mib, folder) for _ in range(runs)]
        w, r, o = (statistics.median(x) for x in zip(*results))
        print(f"| {page_size} | {w:.0f} | {r:.0f} | {o:.3f} |")
    os.rmdir(folder)


if __name__ == "__main__":
    main()
