"""Rates, latencies, CPU seconds and memory of processes, and the curl and HTTP calls they time."""
import http.client, json, os, resource, statistics, subprocess, sys, time, urllib.parse

from .constants import AUTH, SECRET

med = statistics.median


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used since it started."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int, field: str) -> float:
    """A /proc/PID/status figure in MiB (VmHWM: peak resident set since start)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def written_bytes(pid: int | str = "self") -> int:
    """Bytes the process has sent to the storage layer since it started (/proc/PID/io
    write_bytes): the database and its WAL, whether or not the kernel has flushed them yet."""
    with open(f"/proc/{pid}/io") as io:
        for line in io:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


CURL_CPU = [0.0]  # CPU seconds used by every curl run so far


def curl(args: list[str]) -> tuple[float, str]:
    """Runs curl; returns its own total time (no process start) and the body it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["curl", "-sS", "--fail", "-w", "\n%{time_total}", *args], check=True,
                         capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CURL_CPU[0] += after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    body, _, seconds = out.rpartition("\n")
    return float(seconds), body


def upload(server, source: str, name: str, multipart: bool) -> dict:
    """One upload to blobdrop with `curl -T` or `curl -F`; its JSON answer plus the seconds it took."""
    form = ["-F", f"file=@{source};filename={name}"] if multipart else ["-T", source]
    seconds, body = curl(["-u", f":{SECRET}", "-H", "Accept: application/json", *form,
                          f"{server.base}/" + ("" if multipart else name)])
    answer = json.loads(body)
    file = answer[0] if isinstance(answer, list) else answer
    file["seconds"] = seconds
    return file


def download(url: str, byte_range: str | None = None) -> float:
    seconds, _ = curl(["-o", "/dev/null", *(["-r", byte_range] if byte_range else []), url])
    return seconds


def sha256_of_url(url: str) -> str:
    out = subprocess.run(f"curl -sS --fail '{url}' | sha256sum", shell=True, check=True, capture_output=True, text=True)
    return out.stdout.split()[0]


def get_latencies(targets: list[tuple[str, str, dict]], requests: int) -> list[tuple[float, float]]:
    """p50 and p99 in ms of `requests` sequential GETs to each (base, path, headers), one keep-alive
    connection each, taking turns so that every target sees the same load from the rest of the machine."""
    connections = [http.client.HTTPConnection(base.removeprefix("http://"), timeout=60) for base, _, _ in targets]
    times: list[list[float]] = [[] for _ in targets]
    for i in range(requests + 5):
        for connection, (_, path, headers), samples in zip(connections, targets, times):
            start = time.perf_counter()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
            if i >= 5:  # warm-up
                samples.append((time.perf_counter() - start) * 1000)
    for connection in connections:
        connection.close()
    return [(percentile(samples, 50), percentile(samples, 99)) for samples in times]


def put_small(connection: http.client.HTTPConnection, name: str, body: bytes) -> float:
    """ms for one small `PUT /name` on a kept-alive connection."""
    start = time.perf_counter()
    connection.request("PUT", f"/{name}", body=body, headers=AUTH)
    response = connection.getresponse()
    response.read()
    if response.status != 201:
        raise SystemExit(f"PUT /{name}: {response.status}")
    return (time.perf_counter() - start) * 1000


def session_cookie(base: str) -> str:
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=30)
    connection.request("POST", "/login", body=urllib.parse.urlencode({"secret": SECRET}),
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie", "").split(";")[0]
    if response.status != 303 or not cookie:
        raise SystemExit(f"could not sign in: {response.status}")
    return cookie


def system(base: str) -> dict:
    """The server's own account of its database (`GET /api/system`)."""
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=60)
    connection.request("GET", "/api/system", headers=AUTH)
    answer = json.loads(connection.getresponse().read())
    connection.close()
    return answer
