"""The baselines without HTTP: raw SQLite storing the same chunks as the server, and the disk's own dd rate."""
import multiprocessing, os, queue, sqlite3, subprocess, time

from .constants import BATCH, CHUNK, MIB, pragma_statements
from .measure import written_bytes


class RawSqlite:
    """Python's sqlite3 storing files as blobdrop does: 32 KiB chunks, BATCH per INSERT, one short
    transaction each, the server's schema, page size and pragmas (read from its source); `journal`
    replaces the server's journal mode (the journal scenario's rollback journal)."""

    def __init__(self, path: str, journal: str | None = None):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        for pragma in pragma_statements():
            if journal and pragma.startswith("journal_mode"):
                pragma = f"journal_mode={journal}"
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("CREATE TABLE files (id TEXT PRIMARY KEY NOT NULL) STRICT")
        self.db.execute("CREATE TABLE file_chunks (file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE, "
                        "idx INTEGER NOT NULL CHECK (idx >= 0), data BLOB NOT NULL, PRIMARY KEY (file_id, idx)) STRICT")
        self.statements: dict[int, str] = {}

    def insert(self, source: str, file_id: str) -> dict:
        """Stores the file's bytes under `file_id`: MiB/s, CPU seconds per GiB, bytes written per
        byte stored, and the number of chunks."""
        self.db.execute("INSERT INTO files VALUES (?)", (file_id,))
        size = os.path.getsize(source)
        idx = 0
        written = written_bytes()
        cpu = time.process_time()
        start = time.perf_counter()
        with open(source, "rb", buffering=0) as f:
            while batch := f.read(BATCH * CHUNK):
                chunks = [batch[at:at + CHUNK] for at in range(0, len(batch), CHUNK)]
                n = len(chunks)
                sql = self.statements.setdefault(
                    n, "INSERT INTO file_chunks (file_id, idx, data) VALUES " + ",".join(["(?,?,?)"] * n))
                params = []
                for chunk in chunks:
                    params += [file_id, idx, chunk]
                    idx += 1
                self.db.execute(sql, params)
        rate = size / MIB / (time.perf_counter() - start)
        cpu_per_gib = (time.process_time() - cpu) / (size / MIB / 1024)
        return {"rate": rate, "cpu": cpu_per_gib, "written": (written_bytes() - written) / size, "chunks": idx}

    def read(self, file_id: str, chunks: int, size: int) -> tuple[float, float]:
        """MiB/s and CPU seconds per GiB reading a file back in the batches downloads use."""
        cpu = time.process_time()
        start = time.perf_counter()
        for first in range(0, chunks, BATCH):
            rows = self.db.execute("SELECT data FROM file_chunks WHERE file_id=? AND idx BETWEEN ? AND ? ORDER BY idx",
                                   (file_id, first, first + BATCH - 1)).fetchall()
            assert len(rows) == min(BATCH, chunks - first)
        return size / MIB / (time.perf_counter() - start), (time.process_time() - cpu) / (size / MIB / 1024)

    def close(self) -> None:
        self.db.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(self.path + suffix):
                os.remove(self.path + suffix)


def _read_until_stopped(path: str, file_id: str, chunks: int, stop, answer) -> None:
    """In a process of its own: reads a file over and over in the batches downloads use, on a
    connection with the server's pragmas, until `stop` is set; answers the bytes read, the seconds
    it read for, and the slowest batch in seconds."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in pragma_statements():
        if not pragma.startswith(("journal_mode", "page_size", "auto_vacuum")):
            db.execute(f"PRAGMA {pragma}")
    done, slowest, start = 0, 0.0, time.perf_counter()
    try:
        while not stop.is_set():
            for first in range(0, chunks, BATCH):
                began = time.perf_counter()
                try:
                    rows = db.execute("SELECT data FROM file_chunks WHERE file_id=? AND idx BETWEEN ? AND ? ORDER BY idx",
                                      (file_id, first, first + BATCH - 1)).fetchall()
                except sqlite3.OperationalError:
                    rows = []  # refused (busy past its timeout): a batch that got nothing
                slowest = max(slowest, time.perf_counter() - began)
                done += sum(len(row[0]) for row in rows)
                if stop.is_set():
                    break
        answer.put((done, time.perf_counter() - start, slowest))
    except BaseException as error:  # noqa: BLE001 - the parent must hear why, not time out
        answer.put(error)
    finally:
        db.close()


class Reader:
    """A second process reading a stored file over and over while this one writes (see
    `_read_until_stopped`); `stop()` answers its MiB/s and its slowest batch in ms."""

    def __init__(self, path: str, file_id: str, chunks: int):
        context = multiprocessing.get_context("fork")
        self.stop_event, self.answer = context.Event(), context.Queue()
        self.process = context.Process(target=_read_until_stopped,
                                       args=(path, file_id, chunks, self.stop_event, self.answer))
        self.process.start()

    def stop(self) -> tuple[float, float]:
        self.stop_event.set()
        # A batch can wait out SQLite's busy timeout before the reader sees the stop: wait while
        # it lives, and fail with its own error if it died.
        while True:
            try:
                got = self.answer.get(timeout=5)
                break
            except queue.Empty:
                if not self.process.is_alive():
                    raise RuntimeError(f"the reader process ended without an answer (exit code {self.process.exitcode})")
        self.process.join(timeout=60)
        if isinstance(got, BaseException):
            raise RuntimeError(f"the reader process failed: {got!r}")
        done, seconds, slowest = got
        return done / MIB / seconds, slowest * 1000


def raw_sqlite(source: str, folder: str) -> tuple[float, float, float, float]:
    """One file into a fresh database, then read back: insert MiB/s, read MiB/s, and the CPU
    seconds per GiB of the insert and of the read."""
    raw = RawSqlite(os.path.join(folder, "raw.db"))
    try:
        stored = raw.insert(source, "f")
        read, read_cpu = raw.read("f", stored["chunks"], os.path.getsize(source))
    finally:
        raw.close()
    return stored["rate"], read, stored["cpu"], read_cpu


DD_MIB = 4096  # at least this much: a short dd ends inside the host's write cache (1.3 GiB/s for 128 MiB)


def dd_rate(folder: str, mib: int) -> float:
    """MiB/s of `dd bs=1M count=MIB conv=fdatasync` writing zeros to a new file in `folder`: the
    disk's sequential write rate, through the same file system and page cache, up to the last flush."""
    path = os.path.join(folder, "dd.bin")
    start = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={mib}", "conv=fdatasync"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    os.remove(path)
    return mib / seconds
