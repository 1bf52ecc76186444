"""blobdrop on PostgreSQL beside PostgreSQL itself and beside blobdrop on SQLite, in one run.

PostgreSQL's own rate is `COPY file_chunks FROM STDIN (FORMAT binary)` through psql of the same
32 KiB chunks (the fastest way in), and `COPY (SELECT data ...) TO STDOUT (FORMAT binary)` to read
them back. The cluster is scripts/pg-cluster's (started here unless one runs), with durability
switched back on for the run (fsync, full-page writes, synchronous commit), as a real server has it.
"""
import os, struct, subprocess, threading, time

from .constants import AUTH, BINARY, ROOT, SECRET
from .measure import download, get_latencies, med, upload
from .server import Process, Server, free_port, wait_for_port

CHUNK = 32 * 1024
DURABLE = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}


def psql(url: str, sql: str, stdin=None, stdout=subprocess.PIPE) -> str:
    out = subprocess.run(["psql", url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                         stdin=stdin, stdout=stdout, text=stdout is subprocess.PIPE)
    return out.stdout if stdout is subprocess.PIPE else ""


class Cluster:
    """The test cluster with a fresh database per `database()`, durable while the run lasts."""

    def __init__(self):
        script = os.path.join(ROOT, "scripts/pg-cluster")
        found = subprocess.run([script, "url"], capture_output=True, text=True)
        self.started = found.returncode != 0
        self.url = (subprocess.run([script, "start"], check=True, capture_output=True, text=True).stdout
                    if self.started else found.stdout).strip()
        self.script, self.names = script, []
        for key, value in DURABLE.items():
            psql(self.url, f"ALTER SYSTEM SET {key} = {value}")
        psql(self.url, "SELECT pg_reload_conf()")

    def database(self) -> str:
        name = f"bench_{os.getpid()}_{len(self.names)}"
        psql(self.url, f"CREATE DATABASE {name}")
        self.names.append(name)
        return self.url.rsplit("/", 1)[0] + "/" + name

    def close(self) -> None:
        for name in self.names:
            psql(self.url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        for key in DURABLE:
            psql(self.url, f"ALTER SYSTEM RESET {key}")
        psql(self.url, "SELECT pg_reload_conf()")
        if self.started:
            subprocess.run([self.script, "stop"], check=True)


class PgServer(Process):
    """blobdrop with its defaults on the PostgreSQL database `url`."""

    def __init__(self, folder: str, url: str):
        os.makedirs(folder, exist_ok=True)
        self.port = free_port()
        env = dict(os.environ, BLOBDROP_DB=url, BLOBDROP_PORT=str(self.port), BLOBDROP_SHARED_SECRET=SECRET,
                   RUST_LOG="warn")
        self.process = subprocess.Popen([BINARY], env=env, stderr=open(os.path.join(folder, "server.log"), "ab"))
        wait_for_port(self.port, self.process)
        self.base = f"http://127.0.0.1:{self.port}"


def copy_stream(source: str, file_id: str):
    """The PGCOPY binary stream of `source` as chunk rows (file_id, idx, data), written lazily."""
    read, write = os.pipe()

    def produce():
        with os.fdopen(write, "wb") as out, open(source, "rb") as f:
            out.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0))
            key, idx = file_id.encode(), 0
            while block := f.read(CHUNK):
                out.write(struct.pack("!hi", 3, len(key)) + key + struct.pack("!iq", 8, idx)
                          + struct.pack("!i", len(block)) + block)
                idx += 1
            out.write(struct.pack("!h", -1))

    threading.Thread(target=produce, daemon=True).start()
    return os.fdopen(read, "rb")


def raw_postgres(url: str, source: str, mib: int) -> tuple[float, float]:
    """MiB/s of PostgreSQL itself storing and reading the chunks of `source`, in a table like
    migrations/postgres/0001's chunk table (the same key and storage; no parent row to check)."""
    psql(url, "CREATE TABLE file_chunks (file_id TEXT NOT NULL, idx BIGINT NOT NULL, data BYTEA NOT NULL, "
              "PRIMARY KEY (file_id, idx)); ALTER TABLE file_chunks ALTER COLUMN data SET STORAGE EXTERNAL")
    start = time.perf_counter()
    with copy_stream(source, "raw") as stream:
        psql(url, "COPY file_chunks (file_id, idx, data) FROM STDIN (FORMAT binary)", stdin=stream)
    write = mib / (time.perf_counter() - start)
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        psql(url, "COPY (SELECT data FROM file_chunks WHERE file_id = 'raw' ORDER BY idx) TO STDOUT (FORMAT binary)",
             stdout=sink)
    read = mib / (time.perf_counter() - start)
    return write, read


def up_and_down(server, source: str, mib: int, name: str) -> tuple[float, float, str]:
    file = upload(server, source, name, multipart=False)
    seconds = download(file["url"])
    return mib / file["seconds"], mib / seconds, file["url"]


def at_once(servers: list, source: str, mib: int) -> float:
    """MiB/s of two uploads of `source` at once, one to each of `servers` (the same server twice
    for one instance)."""
    results, threads = [], []
    start = time.perf_counter()
    for i, server in enumerate(servers):
        thread = threading.Thread(target=lambda s=server, i=i: results.append(upload(s, source, f"twin{i}.bin", False)))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    if len(results) != len(servers):
        raise SystemExit("an upload of the two at once failed")
    return len(servers) * mib / (time.perf_counter() - start)


def postgres(b) -> None:
    """The `postgres` scenario: see the module's docstring and the summary it prints."""
    mib, large = b.args.small, b.args.large
    source, _ = b.source("small", mib)
    cluster = Cluster()
    try:
        r = {}
        raw = [raw_postgres(cluster.database(), source, mib) for _ in range(b.args.runs)]
        r["raw_write"], r["raw_read"] = med([w for w, _ in raw]), med([rd for _, rd in raw])
        for store in ("postgres", "sqlite"):
            ups, downs, cpus = [], [], []
            for i in range(b.args.runs):
                folder = os.path.join(b.work, f"{store}-{i}")
                server = PgServer(folder, cluster.database()) if store == "postgres" else Server(folder)
                with server:
                    before = server.cpu_seconds()
                    up, down, _ = up_and_down(server, source, mib, "small.bin")
                    cpus.append((server.cpu_seconds() - before) / (2 * mib / 1024))
                    ups.append(up)
                    downs.append(down)
            r[f"{store}_up"], r[f"{store}_down"], r[f"{store}_cpu"] = med(ups), med(downs), med(cpus)
        # Two instances on one database against one instance, two uploads at once either way.
        url = cluster.database()
        with PgServer(os.path.join(b.work, "one"), url) as one, PgServer(os.path.join(b.work, "two"), url) as two:
            r["one_instance"] = med([at_once([one, one], source, mib) for _ in range(b.args.runs)])
            r["two_instances"] = med([at_once([one, two], source, mib) for _ in range(b.args.runs)])
        # Listing latency with one large file and the small one, on each store.
        big, _ = b.source("large", large)
        for store in ("postgres", "sqlite"):
            folder = os.path.join(b.work, f"{store}-listing")
            server = PgServer(folder, cluster.database()) if store == "postgres" else Server(folder)
            with server:
                upload(server, big, "large.bin", multipart=False)
                upload(server, source, "small.bin", multipart=False)
                [(p50, p99)] = get_latencies([(server.base, "/api/files", AUTH)], b.args.requests)
                r[f"{store}_list"] = (p50, p99)
        b.r["postgres"] = r
    finally:
        cluster.close()


def summary(args, r: dict) -> str:
    p = r["postgres"]
    lines = [
        f"PostgreSQL 32 KiB chunks, {args.small} MiB, medians of {args.runs} (durable: fsync, full-page writes, synchronous commit):",
        f"  upload:   blobdrop on PostgreSQL {p['postgres_up']:.0f} MiB/s; PostgreSQL COPY of the same chunks {p['raw_write']:.0f} MiB/s "
        f"({p['postgres_up'] / p['raw_write']:.2f}x); blobdrop on SQLite {p['sqlite_up']:.0f} MiB/s "
        f"(PostgreSQL/SQLite {p['postgres_up'] / p['sqlite_up']:.2f}x)",
        f"  download: blobdrop on PostgreSQL {p['postgres_down']:.0f} MiB/s; PostgreSQL COPY TO of the chunks {p['raw_read']:.0f} MiB/s "
        f"({p['postgres_down'] / p['raw_read']:.2f}x); blobdrop on SQLite {p['sqlite_down']:.0f} MiB/s "
        f"(PostgreSQL/SQLite {p['postgres_down'] / p['sqlite_down']:.2f}x)",
        f"  CPU of the blobdrop process per GiB moved (up + down): PostgreSQL {p['postgres_cpu']:.2f} s, SQLite {p['sqlite_cpu']:.2f} s "
        "(PostgreSQL's own server processes not counted)",
        f"  two uploads at once: to one instance {p['one_instance']:.0f} MiB/s in all, one to each of two instances "
        f"{p['two_instances']:.0f} MiB/s ({p['two_instances'] / p['one_instance']:.2f}x)",
        f"  GET /api/files with a {args.large} MiB file: PostgreSQL p50 {p['postgres_list'][0]:.1f} ms, p99 "
        f"{p['postgres_list'][1]:.1f} ms; SQLite p50 {p['sqlite_list'][0]:.1f} ms, p99 {p['sqlite_list'][1]:.1f} ms",
    ]
    return "\n".join(lines)
