"""Each scenario of the benchmark: it measures blobdrop beside its baseline and adds its figures to `bench.r`."""
import base64, hashlib, http.client, json, os, shutil, subprocess, threading, time, urllib.parse

from .baseline import DD_MIB, RawSqlite, Reader, dd_rate, raw_sqlite
from .constants import AUTH, MIB, ROOT, SECRET
from .measure import (CURL_CPU, curl, download, get_latencies, log, med, percentile, put_small, session_cookie,
                      sha256_of_url, system, upload, written_bytes)
from .nginx import Nginx
from .constants import BINARY
from .server import Rustypaste, Server, build_before, rustypaste_binary


class Bench:
    """One run: its arguments, its temporary folder, the source files written so far, the results."""

    def __init__(self, args, work: str, nginx_binary: str | None = None, rustypaste_install=None):
        self.args, self.work = args, work
        # The build of `--before REV`, made when a scenario first needs it.
        self._before: str | None = None
        self.nginx_binary, self.rustypaste_install = nginx_binary, rustypaste_install
        self.r: dict = {}
        self.files = os.path.join(work, "files")
        self._sources: dict[str, tuple[str, str, int]] = {}

    def source(self, label: str, mib: int) -> tuple[str, str]:
        """`files/label.bin` of `mib` MiB of random bytes (written once per run) and its SHA-256."""
        if label not in self._sources:
            os.makedirs(self.files, exist_ok=True)
            self._sources[label] = (*write_source(self.files, label, mib), mib)
        path, digest, _ = self._sources[label]
        return path, digest

    def before(self) -> str | None:
        """The release binary of `--before REV`, or None without it."""
        if self.args.before and self._before is None:
            self._before = build_before(self.args.before)
        return self._before

    def sizes(self) -> dict[str, int]:
        return {"small": self.args.small, "large": self.args.large}


def write_source(folder: str, label: str, mib: int) -> tuple[str, str]:
    """`folder/label.bin`, `mib` MiB of random bytes, synced; returns its path and SHA-256."""
    path = os.path.join(folder, f"{label}.bin")
    log(f"writing {mib} MiB of random bytes to {path} ...")
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(mib):
            block = os.urandom(MIB)
            digest.update(block)
            f.write(block)
    os.chmod(path, 0o644)
    os.sync()
    return path, digest.hexdigest()


def need_free(folder: str, mib: float, what: str) -> None:
    free = shutil.disk_usage(folder).free
    if free < mib * MIB:
        raise SystemExit(f"{folder} has {free / 2**30:.1f} GiB free; {what} needs about {mib / 1024:.1f} GiB")


def raw(b: Bench) -> None:
    """Raw SQLite, the upload and read baseline: each size RUNS times into a fresh database."""
    for label, mib in b.sizes().items():
        source, _ = b.source(label, mib)
        writes, reads, cpus, read_cpus = [], [], [], []
        for i in range(b.args.runs):
            log(f"raw SQLite, {label}, run {i + 1} ...")
            w, rd, cpu, read_cpu = raw_sqlite(source, b.work)
            writes.append(w)
            reads.append(rd)
            cpus.append(cpu)
            read_cpus.append(read_cpu)
            os.sync()
        b.r[f"raw_insert_{label}"], b.r[f"raw_read_{label}"] = med(writes), med(reads)
        b.r[f"raw_cpu_{label}"], b.r[f"raw_read_cpu_{label}"] = med(cpus), med(read_cpus)


def uploads(b: Bench) -> None:
    """`curl -T` and `curl -F` of each size, each to a fresh server on a fresh database. The large
    `curl -T` uploads' servers give the peak RSS through a large upload."""
    upload_rss = []
    for label, mib in b.sizes().items():
        source, digest = b.source(label, mib)
        for multipart in (False, True):
            rates, server_cpu, client_cpu = [], [], []
            for i in range(b.args.runs):
                log(f"upload {'curl -F' if multipart else 'curl -T'}, {label}, run {i + 1} ...")
                with Server(os.path.join(b.work, "upload")) as server:
                    curl_before = CURL_CPU[0]
                    file = upload(server, source, f"{label}.bin", multipart)
                    server_cpu.append(server.cpu_seconds() / (mib / 1024))
                    client_cpu.append((CURL_CPU[0] - curl_before) / (mib / 1024))
                    if file["sha256"] != digest or file["size"] != mib * MIB:
                        raise SystemExit(f"the server stored other bytes than were sent: {file}")
                    rates.append(mib / file["seconds"])
                    if label == "large" and not multipart:
                        upload_rss.append(server.status("VmHWM"))
                shutil.rmtree(os.path.join(b.work, "upload"))
                os.sync()
            kind = "form" if multipart else "put"
            b.r[f"upload_{kind}_{label}"] = med(rates)
            b.r[f"upload_cpu_{kind}_{label}"] = (med(server_cpu), med(client_cpu))
    b.r["rss_upload"] = max(upload_rss)


def downloads(b: Bench) -> None:
    """Whole file and middle half of each size from one database, in turns with nginx serving the
    same bytes; then the peak RSS of a fresh server through concurrent downloads of the small file."""
    sizes = b.sizes()
    sources = {label: b.source(label, mib) for label, mib in sizes.items()}
    data = os.path.join(b.work, "data")
    os.chmod(b.work, 0o755)  # nginx's worker reads the files
    nginx = Nginx(b.nginx_binary, os.path.join(b.work, "nginx"), b.files)
    try:
        with Server(data) as server:
            paths = {label: urllib.parse.urlsplit(upload(server, source, f"{label}.bin", False)["url"]).path
                     for label, (source, _) in sources.items()}
            urls = {label: server.base + path for label, path in paths.items()}
            os.sync()
            log("checking that a download returns the uploaded bytes ...")
            if sha256_of_url(urls["small"]) != sources["small"][1]:
                raise SystemExit("a download returned other bytes than were uploaded")
            for label in sources:
                total = sizes[label] * MIB
                middle = f"{total // 4}-{total // 4 + total // 2 - 1}"
                for kind, byte_range, mib in (("whole", None, sizes[label]), ("range", middle, sizes[label] / 2)):
                    ours, theirs = [], []
                    download(urls[label], byte_range)  # warm the page cache for both servers alike
                    download(f"{nginx.base}/{label}.bin", byte_range)
                    cpu, nginx_cpu = 0.0, 0.0
                    for i in range(b.args.runs):
                        log(f"download {kind}, {label}, run {i + 1} ...")
                        cpu -= server.cpu_seconds()
                        ours.append(mib / download(urls[label], byte_range))
                        cpu += server.cpu_seconds()
                        nginx_cpu -= nginx.cpu_seconds()
                        theirs.append(mib / download(f"{nginx.base}/{label}.bin", byte_range))
                        nginx_cpu += nginx.cpu_seconds()
                    b.r[f"down_{kind}_{label}"], b.r[f"nginx_{kind}_{label}"] = med(ours), med(theirs)
                    gib = b.args.runs * mib / 1024
                    b.r[f"down_cpu_{kind}_{label}"] = (cpu / gib, nginx_cpu / gib)
    finally:
        nginx.stop()

    # Peak RSS through concurrent downloads: a fresh process on the same database.
    with Server(data) as server:
        log(f"{b.args.clients} concurrent downloads of the small file ...")
        clients = [subprocess.Popen(["curl", "-sS", "--fail", "-o", "/dev/null", server.base + paths["small"]])
                   for _ in range(b.args.clients)]
        if any(client.wait() != 0 for client in clients):
            raise SystemExit("a concurrent download failed")
        b.r["rss_downloads"] = server.status("VmHWM")
    shutil.rmtree(data)  # each phase frees its disk space: a full disk would fail the next one


def listings(b: Bench) -> None:
    """Two servers with the same tiny files, one with the large file among them too, asked in turns."""
    large_source, _ = b.source("large", b.args.large)
    with Server(os.path.join(b.work, "tiny")) as tiny, Server(os.path.join(b.work, "large")) as large:
        log(f"{b.args.files} files on each of two servers, one of them the large file on the second ...")
        for server, count in ((tiny, b.args.files), (large, b.args.files - 1)):
            connection = http.client.HTTPConnection(f"127.0.0.1:{server.port}", timeout=60)
            for i in range(count):
                put_small(connection, f"tiny-{i:04}.txt", b"x" * 100)
            connection.close()
        upload(large, large_source, "large.bin", False)
        os.sync()
        log("listing latency ...")
        for key, path in (("api", "/api/files"), ("page", "/files")):
            targets = [(server.base, path, AUTH if key == "api" else {"Cookie": session_cookie(server.base)})
                       for server in (tiny, large)]
            b.r[f"{key}_tiny"], b.r[f"{key}_large"] = get_latencies(targets, b.args.requests)
    shutil.rmtree(os.path.join(b.work, "tiny"))
    shutil.rmtree(os.path.join(b.work, "large"))


def pagination(b: Bench) -> None:
    """--pagination-files files (rows put straight into the files table: empty files, no chunks; the
    listings read that table only), then the first page and a page near the end of `GET /api/files`
    and of the signed-in files page, newest first and by name, by cursor and by the deprecated
    offset, each the same number of requests in turns."""
    import sqlite3
    count = b.args.pagination_files
    with Server(os.path.join(b.work, "pagination")) as server:
        log(f"{count} files straight into the files table ...")
        db = sqlite3.connect(os.path.join(server.folder, "blobdrop.db"), timeout=30)
        start = int(time.time()) - count
        with db:  # three files a second, so the cursor's id breaks ties
            db.executemany(
                "INSERT INTO files (id, created_at, filename, content_type, file_size, chunk_size, sha256, "
                "download_count, state, crc32) VALUES (?, ?, ?, 'text/plain', 0, 32768, ?, 0, 'ready', 0)",
                ((base64.urlsafe_b64encode(os.urandom(16)).decode()[:22], start + i // 3, f"file-{i:06}.txt",
                  hashlib.sha256(b"").hexdigest()) for i in range(count)))
        # The file just before the last page, in each order: where a Next link near the end starts.
        newest, = db.execute("SELECT created_at || '.' || id FROM files ORDER BY created_at DESC, id DESC "
                             "LIMIT 1 OFFSET ?", (count - 51,)).fetchone()
        name, name_id = db.execute("SELECT filename, id FROM files ORDER BY filename COLLATE NOCASE, id "
                                   "LIMIT 1 OFFSET ?", (count - 51,)).fetchone()
        db.close()
        by_name = "~" + base64.urlsafe_b64encode(name.encode()).decode().rstrip("=") + "." + name_id
        page = {"Cookie": session_cookie(server.base)}
        last_page = (count + 49) // 50
        targets = [
            ("api", "first", "/api/files?limit=50", AUTH),
            ("api", "cursor", f"/api/files?limit=50&cursor={newest}", AUTH),
            ("api", "offset", f"/api/files?limit=50&offset={count - 50}", AUTH),
            ("page", "first", "/files", page),
            ("page", "cursor", f"/files?page={last_page}&after={newest}", page),
            ("page", "offset", f"/files?page={last_page}", page),
            ("page by name", "first", "/files?sort=name&dir=asc", page),
            ("page by name", "cursor", f"/files?sort=name&dir=asc&page={last_page}&after={by_name}", page),
        ]
        log("listing latency, first and last pages ...")
        latencies = get_latencies([(server.base, path, headers) for _, _, path, headers in targets], b.args.requests)
        b.r["pagination"] = {f"{what}|{which}": figures for (what, which, _, _), figures in zip(targets, latencies)}
    shutil.rmtree(os.path.join(b.work, "pagination"))


def guests(b: Bench) -> None:
    b.r["rss_guests"], b.r["guest_codes"] = guest_uploads_rss(b.work, b.args.guest_uploads, b.args.guest_upload_size, False)
    b.r["rss_guest_forms"], b.r["guest_form_codes"] = guest_uploads_rss(b.work, b.args.guest_uploads,
                                                                        b.args.guest_upload_size, True)


def guest_uploads_rss(work: str, uploads: int, mib: int, form: bool) -> tuple[float, dict]:
    """Peak RSS of a fresh server while `uploads` clients each send `mib` MiB at once with `curl -T`
    (or `curl -F` if `form`) through one guest link, and how many answers of each status came back. The limits on guest
    uploads in flight per link and per address are raised to `uploads` (every client here is
    127.0.0.1), so that all of them run at once and only the shared upload memory bounds the RSS."""
    folder = os.path.join(work, "guests")
    os.makedirs(folder)
    source = os.path.join(folder, "guest.bin")
    with open(source, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(MIB))
    limits = {"BLOBDROP_GUEST_LINK_UPLOADS": str(uploads), "BLOBDROP_CLIENT_UPLOADS": str(uploads)}
    with Server(os.path.join(folder, "data"), limits) as server:
        _, body = curl(["-u", f":{SECRET}", "-H", "Content-Type: application/json", "-d", '{"label": "bench"}',
                        f"{server.base}/api/guest-links"])
        link = json.loads(body)["url"]
        log(f"{uploads} concurrent guest uploads of {mib} MiB {'(forms)' if form else ''}...")
        sends = [["-F", f"file=@{source};filename=guest-{i}.bin", link] if form else ["-T", source, f"{link}/guest-{i}.bin"]
                 for i in range(uploads)]
        clients = [subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", *send],
                                    stdout=subprocess.PIPE, text=True) for send in sends]
        codes = [client.communicate()[0].strip() for client in clients]
        rss = server.status("VmHWM")
    shutil.rmtree(folder)
    return rss, {code: codes.count(code) for code in sorted(set(codes))}


def latency(b: Bench) -> None:
    """1 KiB uploads one after another while a large upload runs."""
    large_source, _ = b.source("large", b.args.large)
    with Server(os.path.join(b.work, "latency")) as server:
        log(f"{b.args.small_uploads} uploads of 1 KiB during a large upload ...")
        big = subprocess.Popen(["curl", "-sS", "--fail", "-o", "/dev/null", "-u", f":{SECRET}", "-T", large_source,
                                f"{server.base}/large.bin"])
        time.sleep(1.0)  # let the large upload get going
        connection = http.client.HTTPConnection(f"127.0.0.1:{server.port}", timeout=60)
        times = [put_small(connection, f"small-{i}.txt", os.urandom(1024)) for i in range(b.args.small_uploads)]
        connection.close()
        b.r["big_still_running"] = big.poll() is None
        if big.wait() != 0:
            raise SystemExit("the large upload failed")
        b.r["small_upload"] = (percentile(times, 50), percentile(times, 99))
    shutil.rmtree(os.path.join(b.work, "latency"))


PURGE_UPLOAD_EVERY = 0.02  # seconds between the starts of two 1 KiB uploads during a purge


def purge(b: Bench) -> None:
    """p50, p99 and max ms of 1 KiB uploads, one started every PURGE_UPLOAD_EVERY seconds (or when the
    one before ends, if later), from the moment `--purge-files` uploads of the large file are deleted
    until the clean-up has removed their chunks and given the pages back; the number of uploads; the
    seconds the purge took. The small file is uploaded after them and stays, so giving the pages back
    moves its pages down into the freed space, as it does when old files go and newer ones stay.
    Uploads at a steady rate sample the purge evenly in time: back-to-back uploads would mostly
    sample the moments the write connection is free."""
    args = b.args
    source, _ = b.source("large", args.large)
    kept, _ = b.source("small", args.small)
    with Server(os.path.join(b.work, "purge")) as server:
        ids = []
        for i in range(args.purge_files):
            log(f"purge: uploading the large file, copy {i + 1} of {args.purge_files} ...")
            ids.append(upload(server, source, f"purged-{i}.bin", False)["id"])
        upload(server, kept, "kept.bin", False)
        os.sync()  # the purge reads the chunks' pages from disk, as after a while they would be
        baseline = system(server.base)["database_bytes"] - args.purge_files * args.large * MIB
        log(f"purge: deleting {args.purge_files} x {args.large} MiB, then 1 KiB uploads until it is all given back ...")
        connection = http.client.HTTPConnection(f"127.0.0.1:{server.port}", timeout=60)
        start = time.perf_counter()
        for file_id in ids:
            connection.request("DELETE", f"/api/files/{file_id}", headers=AUTH)
            response = connection.getresponse()
            response.read()
            if response.status != 204:
                raise SystemExit(f"DELETE {file_id}: {response.status}")
        times: list[float] = []
        while True:
            for _ in range(10):
                took = put_small(connection, f"during-{len(times)}.txt", os.urandom(1024))
                times.append(took)
                time.sleep(max(0.0, PURGE_UPLOAD_EVERY - took / 1000))
            now = system(server.base)
            if now["reclaimable_bytes"] == 0 and now["database_bytes"] <= baseline + 64 * MIB:
                break
            if time.perf_counter() - start > 1800:
                raise SystemExit("the purge took more than 30 minutes")
        seconds = time.perf_counter() - start
        connection.close()
    shutil.rmtree(os.path.join(b.work, "purge"))
    b.r["purge"] = (percentile(times, 50), percentile(times, 99), max(times), len(times), seconds)


def growth(b: Bench) -> None:
    """`--growth N x MiB`: N uploads (`curl -T`) of one file in a row into one database, each in
    turn with raw SQLite storing the same file into a database of its own that grows alike, and
    `dd conv=fdatasync` of the same size (at least DD_MIB) on the same folder before and after, the
    disk's limit.
    Each upload: MiB/s, the server's CPU seconds per GiB, the bytes it wrote per byte stored
    (/proc/PID/io: the WAL and the database), the WAL's size after it, and how long the `sync`
    after it took (what was still dirty in the page cache)."""
    n, mib = b.args.growth
    label = "large" if mib == b.args.large else "growth"
    source, digest = b.source(label, mib)
    folder = os.path.join(b.work, "growth")
    os.makedirs(folder)
    need_free(folder, max(2 * n * mib * 1.1, DD_MIB) + 512, f"the growth scenario ({n} x {mib} MiB, twice)")
    rows = []
    dd_mib = max(mib, DD_MIB)
    dd = [dd_rate(folder, dd_mib)]
    log(f"growth: dd {dd_mib} MiB: {dd[0]:.0f} MiB/s")
    raw_db = RawSqlite(os.path.join(folder, "raw.db"))
    try:
        with Server(os.path.join(folder, "data")) as server:
            for i in range(n):
                log(f"growth: upload {i + 1} of {n} ({mib} MiB), raw SQLite then blobdrop ...")
                raw_row = raw_db.insert(source, f"file-{i}")
                start = time.perf_counter()
                os.sync()
                raw_sync = time.perf_counter() - start
                cpu, written = server.cpu_seconds(), written_bytes(server.process.pid)
                file = upload(server, source, f"growth-{i}.bin", False)
                cpu, written = server.cpu_seconds() - cpu, written_bytes(server.process.pid) - written
                if file["sha256"] != digest:
                    raise SystemExit(f"the server stored other bytes than were sent: {file}")
                wal = server.file_bytes("-wal")
                start = time.perf_counter()
                os.sync()
                rows.append({"rate": mib / file["seconds"], "cpu": cpu / (mib / 1024), "written": written / (mib * MIB),
                             "wal": wal / MIB, "sync": time.perf_counter() - start, "db": server.file_bytes() / 2**30,
                             "raw": raw_row["rate"], "raw_cpu": raw_row["cpu"], "raw_written": raw_row["written"],
                             "raw_sync": raw_sync})
                log(f"growth: {rows[-1]['rate']:.0f} MiB/s (raw SQLite {raw_row['rate']:.0f})")
    finally:
        raw_db.close()
    dd.append(dd_rate(folder, dd_mib))
    shutil.rmtree(folder)
    b.r["growth"] = rows
    b.r["growth_dd"] = dd
    b.r["growth_dd_mib"] = dd_mib


# The server's journal (None: as its pragmas say) and the one that writes appended pages once.
JOURNALS = (("WAL (the server's)", None), ("rollback, TRUNCATE", "TRUNCATE"))


def journal(b: Bench) -> None:
    """Why the server keeps WAL: raw SQLite stores the large file with the server's pragmas in WAL
    and with a rollback journal (TRUNCATE) in turns, RUNS times each, each into a fresh database
    that holds the small file, which a second process reads in download batches meanwhile. For
    each: the write's MiB/s, CPU seconds per GiB and bytes written per byte stored, and what the
    reader got meanwhile: MiB/s and its slowest batch."""
    small, _ = b.source("small", b.args.small)
    large, _ = b.source("large", b.args.large)
    runs: dict[str, list] = {label: [] for label, _ in JOURNALS}
    for i in range(b.args.runs):
        for label, mode in JOURNALS:
            log(f"journal: {label}, run {i + 1} ...")
            raw_db = RawSqlite(os.path.join(b.work, "journal.db"), mode)
            try:
                stored = raw_db.insert(small, "small")
                reader = Reader(raw_db.path, "small", stored["chunks"])
                try:
                    row = raw_db.insert(large, "large")
                finally:
                    read, slowest = reader.stop()
            finally:
                raw_db.close()
            os.sync()
            runs[label].append((row["rate"], row["cpu"], row["written"], read, slowest))
    b.r["journal"] = {label: [med(column) for column in zip(*rows)] for label, rows in runs.items()}


def rustypaste(b: Bench) -> None:
    """The large file, `curl -F` up and `curl` down, to blobdrop and rustypaste in turns, each run on
    fresh processes and fresh folders: MiB/s and CPU seconds per GiB of each, each one's peak RSS,
    and the upload's MiB/s to the moment its bytes are durable (rustypaste: its answer, then
    `sync -f` on its file; blobdrop: its 201)."""
    binary = rustypaste_binary(b.rustypaste_install)
    mib = b.args.large
    source, digest = b.source("large", mib)
    gib = mib / 1024
    runs: dict[str, list] = {"ours": [], "theirs": []}
    for i in range(b.args.runs):
        for who in ("ours", "theirs"):
            folder = os.path.join(b.work, "side-by-side")
            log(f"side by side, {'blobdrop' if who == 'ours' else 'rustypaste'}, run {i + 1} ...")
            server = Server(folder) if who == "ours" else Rustypaste(binary, folder, mib)
            try:
                cpu = server.cpu_seconds()
                if who == "ours":
                    file = upload(server, source, "large.bin", True)
                    if file["sha256"] != digest:
                        raise SystemExit(f"the server stored other bytes than were sent: {file}")
                    # Its 201 comes after the commit that made the file visible was synced.
                    up, url = file["seconds"], file["url"]
                    durable = up
                else:
                    up, body = curl(["-F", f"file=@{source};filename=large.bin", f"{server.base}/"])
                    url = body.strip().splitlines()[-1]
                    stored = os.path.join(folder, "upload", urllib.parse.urlsplit(url).path.lstrip("/"))
                    if os.path.getsize(stored) != mib * MIB:
                        raise SystemExit(f"rustypaste stored {os.path.getsize(stored)} bytes of {mib * MIB}")
                    # rustypaste answers before its file is on the disk: durable once `sync -f` is done.
                    start = time.perf_counter()
                    subprocess.run(["sync", "-f", stored], check=True)
                    durable = up + time.perf_counter() - start
                up_cpu = server.cpu_seconds() - cpu
                cpu = server.cpu_seconds()
                down = download(url)
                down_cpu = server.cpu_seconds() - cpu
                runs[who].append((mib / up, up_cpu / gib, mib / down, down_cpu / gib, server.status("VmHWM"),
                                  mib / durable))
            finally:
                server.stop()
                shutil.rmtree(folder, ignore_errors=True)
            os.sync()
    for who, figures in runs.items():
        columns = list(zip(*figures))
        b.r[f"paste_{who}"] = (*(med(column) for column in columns[:4]), max(columns[4]), med(columns[5]))


SMALL_SIZES = (("1 KiB", 1024), ("64 KiB", 64 * 1024), ("1 MiB", MIB))
SMALL_CLIENTS = (1, 8)


def multipart_body(name: str, payload: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body of one file part, as `curl -F file=@NAME` sends it, and its type."""
    boundary = "blobdrop-bench-boundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head + payload + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def uploads_for(base: str, payload: bytes, headers: dict, clients: int, seconds: float) -> float:
    """Uploads per second: `clients` threads, each on one keep-alive connection, posting `payload`
    as a file of a name of its own (rustypaste refuses a name it has) to `base`/ one after another
    for `seconds`; every answer must be 200 or 201."""
    counts, failures = [0] * clients, []
    deadline = time.perf_counter() + seconds

    def client(i: int) -> None:
        connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=60)
        try:
            while time.perf_counter() < deadline:
                body, content_type = multipart_body(f"small-{i}-{counts[i]}.bin", payload)
                connection.request("POST", "/", body=body, headers={"Content-Type": content_type, **headers})
                response = connection.getresponse()
                response.read()
                if response.status not in (200, 201):
                    failures.append(f"POST /: {response.status}")
                    return
                counts[i] += 1
        finally:
            connection.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(failures[0])
    return sum(counts) / (time.perf_counter() - start)


def small_uploads(b: Bench) -> None:
    """Uploads per second of small files (each of SMALL_SIZES, from one client and from 8 at once,
    on keep-alive connections, multipart as `curl -F` sends them, for --small-seconds each) to
    blobdrop, to the `--before` build if given, and to rustypaste, in turns on fresh processes. The
    price of durable commits is blobdrop against the build before them; rustypaste syncs nothing."""
    makers = {"blobdrop": lambda folder: Server(folder)}
    if before := b.before():
        makers["before"] = lambda folder: Server(folder, binary=before)
    binary = rustypaste_binary(b.rustypaste_install)
    makers["rustypaste"] = lambda folder: Rustypaste(binary, folder, 2)
    rows: dict[tuple[str, int], dict[str, float]] = {}
    for label, size in SMALL_SIZES:
        payload = os.urandom(size)
        for clients in SMALL_CLIENTS:
            for who, make in makers.items():
                folder = os.path.join(b.work, "small-uploads")
                log(f"small uploads: {label} x {clients} client(s), {who} ...")
                server = make(folder)
                try:
                    headers = AUTH if who != "rustypaste" else {}
                    rows.setdefault((label, clients), {})[who] = uploads_for(
                        server.base, payload, headers, clients, b.args.small_seconds)
                finally:
                    server.stop()
                    shutil.rmtree(folder, ignore_errors=True)
    b.r["small_uploads"] = rows


def share_zip(b: Bench) -> None:
    """MiB/s of `curl -o /dev/null` for one file of `--share-mib` MiB and for the zip of a share of
    `--share-files` files holding the same bytes (the zip is a little longer: its headers count)."""
    args = b.args
    source, _ = b.source("share", args.share_mib)
    part = args.share_mib * MIB // args.share_files
    with Server(os.path.join(b.work, "share")) as server:
        whole = upload(server, source, "whole.bin", False)
        ids = []
        with open(source, "rb") as f:
            for i in range(args.share_files):
                piece = os.path.join(b.work, "piece.bin")
                with open(piece, "wb") as out:
                    out.write(f.read(part if i < args.share_files - 1 else args.share_mib * MIB))
                ids.append({"id": upload(server, piece, f"part-{i:03}.bin", False)["id"], "folder": f"dir-{i % 10}"})
        body = json.dumps({"name": "bench", "files": ids})
        _, answer = curl(["-u", f":{SECRET}", "-H", "Content-Type: application/json", "-d", body,
                          f"{server.base}/api/shares"])
        zip_url = json.loads(answer)["zip_url"]
        head = subprocess.run(["curl", "-sSI", zip_url], check=True, capture_output=True, text=True).stdout
        zip_bytes = int(head.lower().split("content-length:")[1].split()[0])
        one, zipped = [], []
        for i in range(args.runs):
            log(f"share zip: run {i + 1} of {args.runs} ...")
            one.append(args.share_mib / download(whole["url"]))
            zipped.append(zip_bytes / MIB / download(zip_url))
    shutil.rmtree(os.path.join(b.work, "share"))
    b.r["share_zip"] = (med(one), med(zipped))


def share_names(b: Bench) -> None:
    """A share of `--share-names` empty files all named `photo.jpg` (uploaded as forms of 1,000):
    seconds to make the share (`POST /api/shares`), to answer the first `HEAD` of its zip (lays it
    out, renaming the duplicates) and the second (the same version: from the cache)."""
    count = b.args.share_names
    empty = os.path.join(b.work, "photo.jpg")
    open(empty, "wb").close()
    with Server(os.path.join(b.work, "share-names")) as server:
        ids = []
        for start in range(0, count, 1000):
            log(f"share names: uploading files {start + 1} to {min(start + 1000, count)} ...")
            parts = [arg for _ in range(min(1000, count - start)) for arg in ("-F", f"f=@{empty};filename=photo.jpg")]
            _, answer = curl(["-u", f":{SECRET}", "-H", "Accept: application/json", *parts, f"{server.base}/"])
            ids.extend(file["id"] for file in json.loads(answer))
        body = os.path.join(b.work, "share-names.json")
        with open(body, "w") as f:
            json.dump({"name": "same names", "files": ids}, f)
        made, answer = curl(["-u", f":{SECRET}", "-H", "Content-Type: application/json", "-d", f"@{body}",
                             f"{server.base}/api/shares"])
        zip_url = json.loads(answer)["zip_url"]
        heads = [curl(["-I", zip_url])[0] for _ in range(2)]
    shutil.rmtree(os.path.join(b.work, "share-names"))
    b.r["share_names"] = (made, heads[0], heads[1])


def tus(b: Bench) -> None:
    """A `--tus-mib` MiB upload through tus in `--tus-patch` MiB PATCHes against `curl -T` of the same
    file, RUNS pairs back to back, each pair on a fresh server, the order switched every run (the
    second upload of a pair goes into a bigger database).

    The tus client is one keep-alive connection that streams each PATCH's slice of the file (as a tus
    library does); each PATCH's wait between its last byte sent and its answer is the server's own
    time (committing the PATCH's last batches; for the last, finishing the file, which must not read
    it back). Beside it, once a run, the harness this replaced: one curl process per PATCH reading
    its slice from stdin (`--data-binary @-` reads all of it into memory before sending a byte)."""
    args = b.args
    source, digest = b.source("tus", args.tus_mib)
    plain, resumable, per_curl, waits, finish = [], [], [], [], []
    for i in range(args.runs):
        folder = os.path.join(b.work, f"tus-{i}")
        with Server(folder) as server:
            for what in (["curl", "tus"] if i % 2 == 0 else ["tus", "curl"]):
                if what == "curl":
                    log(f"tus: run {i + 1} of {args.runs}: curl -T ...")
                    plain.append(args.tus_mib / upload(server, source, f"plain-{i}.bin", False)["seconds"])
                    continue
                log(f"tus: run {i + 1} of {args.runs}: {-(-args.tus_mib // args.tus_patch)} PATCHes on one connection ...")
                seconds, patch_waits, file_url = tus_stream(server, source, args.tus_patch * MIB, f"tus-{i}.bin")
                resumable.append(args.tus_mib / seconds)
                waits.append(sum(patch_waits))
                finish.append(patch_waits[-1])
                if sha256_of_url(file_url) != digest:
                    raise SystemExit("the tus upload came back with other bytes")
            log(f"tus: run {i + 1} of {args.runs}: {-(-args.tus_mib // args.tus_patch)} PATCHes, one curl each ...")
            seconds, file_url = tus_curl_per_patch(server, source, args.tus_patch * MIB, f"tus-curl-{i}.bin")
            per_curl.append(args.tus_mib / seconds)
            if sha256_of_url(file_url) != digest:
                raise SystemExit("the tus upload (one curl per PATCH) came back with other bytes")
        shutil.rmtree(folder)
    b.r["tus"] = (med(plain), med(resumable), med(finish), med(per_curl), med(waits), -(-args.tus_mib // args.tus_patch))


def tus_create(server: Server, size: int, name: str) -> str:
    """Creates a tus upload of `size` bytes; returns its path."""
    meta = "filename " + base64.b64encode(name.encode()).decode()
    connection = http.client.HTTPConnection(server.base.removeprefix("http://"), timeout=600)
    connection.request("POST", "/api/uploads", headers={**AUTH, "Tus-Resumable": "1.0.0", "Upload-Length": str(size),
                                                        "Upload-Metadata": meta})
    response = connection.getresponse()
    response.read()
    connection.close()
    if response.status != 201:
        raise SystemExit(f"tus creation: {response.status}")
    return urllib.parse.urlsplit(response.getheader("Location")).path


class Slice:
    """The next `length` bytes of an open file, read as http.client sends a body (blocksize at a time)."""

    def __init__(self, f, length: int):
        self.f, self.left = f, length

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(self.left if n < 0 else min(n, self.left))
        self.left -= len(data)
        return data


def tus_stream(server: Server, source: str, patch: int, name: str) -> tuple[float, list[float], str]:
    """The tus upload of `source` in `patch`-byte PATCHes on one keep-alive connection: seconds from
    the creation to the last answer, each PATCH's wait from its last byte sent to its answer, the file URL."""
    size = os.path.getsize(source)
    started = time.perf_counter()
    path = tus_create(server, size, name)
    connection = http.client.HTTPConnection(server.base.removeprefix("http://"), timeout=600, blocksize=MIB)
    offset, patch_waits, file_url = 0, [], ""
    with open(source, "rb", buffering=0) as f:
        while offset < size:
            length = min(patch, size - offset)
            connection.request("PATCH", path, body=Slice(f, length), headers={
                **AUTH, "Tus-Resumable": "1.0.0", "Upload-Offset": str(offset), "Content-Length": str(length),
                "Content-Type": "application/offset+octet-stream"})
            sent = time.perf_counter()
            response = connection.getresponse()
            response.read()
            patch_waits.append(time.perf_counter() - sent)
            if response.status != 204:
                raise SystemExit(f"PATCH at {offset}: {response.status}")
            file_url = response.getheader("X-File-Url") or file_url
            offset += length
    seconds = time.perf_counter() - started
    connection.close()
    return seconds, patch_waits, file_url


def tus_curl_per_patch(server: Server, source: str, patch: int, name: str) -> tuple[float, str]:
    """The harness of before: one curl process per PATCH, its slice piped through stdin."""
    size = os.path.getsize(source)
    started = time.perf_counter()
    url = server.base + tus_create(server, size, name)
    offset, file_url = 0, ""
    with open(source, "rb") as f:
        while offset < size:
            piece = f.read(patch)
            out = subprocess.run(
                ["curl", "-sS", "--fail", "-D", "-", "-o", "/dev/null", "-u", f":{SECRET}", "-X", "PATCH",
                 "-H", "Tus-Resumable: 1.0.0", "-H", f"Upload-Offset: {offset}",
                 "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "@-", url],
                input=piece, check=True, capture_output=True).stdout.decode()
            for line in out.splitlines():
                if line.lower().startswith("x-file-url:"):
                    file_url = line.split(":", 1)[1].strip()
            offset += len(piece)
    return time.perf_counter() - started, file_url


def encrypted_client(b: Bench) -> None:
    """The client's end-to-end encryption: `blobdrop upload --encrypt` of an --encrypt-mib MiB file
    against `blobdrop upload` of it, then `blobdrop get LINK#KEY` of that upload against `blobdrop get`
    of the plain one; RUNS pairs, each on a fresh server, the order switched every run. Each figure is
    the client process's wall time (start to exit: the encryption's key set-up is part of it), and the
    CPU seconds of the client beside it. Both sides go over tus (a file) and one GET."""
    args = b.args
    source, digest = b.source("encrypted", args.encrypt_mib)
    figures: dict[str, list[float]] = {key: [] for key in ("put", "put_enc", "get", "get_enc", "cpu_put", "cpu_put_enc")}
    for i in range(args.runs):
        folder = os.path.join(b.work, f"encrypted-{i}")
        with Server(folder) as server:
            env = dict(os.environ, BLOBDROP_URL=server.base, BLOBDROP_TOKEN=SECRET, XDG_CACHE_HOME=folder)
            links = {}
            for what in (["plain", "encrypted"] if i % 2 == 0 else ["encrypted", "plain"]):
                log(f"encrypted_client: run {i + 1} of {args.runs}: blobdrop upload{' --encrypt' if what == 'encrypted' else ''} ...")
                flags = ["--encrypt"] if what == "encrypted" else []
                seconds, cpu, out = timed_client(env, ["upload", *flags, source])
                links[what] = out.strip()
                figures["put_enc" if what == "encrypted" else "put"].append(args.encrypt_mib / seconds)
                figures["cpu_put_enc" if what == "encrypted" else "cpu_put"].append(cpu)
            for what in (["plain", "encrypted"] if i % 2 == 0 else ["encrypted", "plain"]):
                log(f"encrypted_client: run {i + 1} of {args.runs}: blobdrop get ({what}) ...")
                target = os.path.join(folder, f"{what}.bin")
                seconds, _, _ = timed_client(env, ["get", links[what], "-o", target])
                figures["get_enc" if what == "encrypted" else "get"].append(args.encrypt_mib / seconds)
                if file_sha256(target) != digest:
                    raise SystemExit(f"blobdrop get ({what}) came back with other bytes")
                os.remove(target)
        shutil.rmtree(folder)
    b.r["encrypted_client"] = {key: med(values) for key, values in figures.items()}


def encrypted_page(b: Bench) -> None:
    """The page's end-to-end encryption: in headless Chromium (browser-tests/bench-encryption.mjs),
    the upload page sends an --encrypt-mib MiB file plain and with "Encrypt in this browser", and the
    browser saves it plain and decrypted by its /e/ID#KEY page; RUNS of each, in turns, on one fresh
    server. Each figure is the page's wall time, with the peak of the page's JavaScript heap."""
    args = b.args
    source, _ = b.source("encrypted", args.encrypt_mib)
    folder = os.path.join(b.work, "encrypted-page")
    here = os.path.join(ROOT, "browser-tests")
    if not os.path.isdir(os.path.join(here, "node_modules")):
        log("encrypted_page: npm ci in browser-tests ...")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=here, check=True, capture_output=True)
    with Server(folder) as server:
        log(f"encrypted_page: {args.runs} runs of {args.encrypt_mib} MiB up and down, plain and encrypted, in Chromium ...")
        done = subprocess.run(["node", "bench-encryption.mjs", server.base, SECRET, source, str(args.runs)],
                              cwd=here, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"encrypted_page failed: {done.stderr.strip()[-2000:]}")
    shutil.rmtree(folder)
    b.r["encrypted_page"] = json.loads(done.stdout.strip().splitlines()[-1])


def timed_client(env: dict, args: list[str]) -> tuple[float, float, str]:
    """Runs the blobdrop client; returns its wall seconds, its CPU seconds and what it printed."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run([BINARY, *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"blobdrop {' '.join(args)} failed: {done.stderr.strip()}")
    return seconds, after.children_user + after.children_system - before.children_user - before.children_system, done.stdout


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(MIB):
            digest.update(block)
    return digest.hexdigest()
