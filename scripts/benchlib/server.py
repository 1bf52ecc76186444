"""blobdrop and rustypaste as processes on loopback ports, started and stopped by their pid."""
import os, re, shutil, signal, socket, subprocess, time

from .constants import BINARY, ROOT, SECRET
from .measure import cpu_seconds, log, proc_status


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    for _ in range(200):
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{process.args[0]} did not start")


class Process:
    """A server this benchmark started: its pid's CPU time and memory; stopped with `stop_signal`."""

    stop_signal = signal.SIGTERM
    process: subprocess.Popen

    def status(self, field: str) -> float:
        return proc_status(self.process.pid, field)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        self.process.send_signal(self.stop_signal)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()


class Server(Process):
    """blobdrop with its defaults, on a database in `folder`, secret from the environment; `binary`
    is another build of it (`--before`)."""

    def __init__(self, folder: str, settings: dict | None = None, binary: str = BINARY):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.port = free_port()
        env = dict(os.environ, BLOBDROP_DB=os.path.join(folder, "blobdrop.db"), BLOBDROP_PORT=str(self.port),
                   BLOBDROP_SHARED_SECRET=SECRET, RUST_LOG="warn", **(settings or {}))
        self.process = subprocess.Popen([binary], env=env, stderr=open(os.path.join(folder, "server.log"), "ab"))
        wait_for_port(self.port, self.process)
        self.base = f"http://127.0.0.1:{self.port}"

    def file_bytes(self, suffix: str = "") -> int:
        """Size of the database file (or of its `-wal`)."""
        path = os.path.join(self.folder, "blobdrop.db" + suffix)
        return os.path.getsize(path) if os.path.exists(path) else 0


CACHE = os.path.expanduser("~/.cache/blobdrop-bench")
RUSTYPASTE_ROOT = os.path.join(CACHE, "rustypaste")
RUSTYPASTE = os.path.join(RUSTYPASTE_ROOT, "bin/rustypaste")


def start_rustypaste_install() -> subprocess.Popen | None:
    """Starts `cargo install rustypaste` into the cache folder when it is not there yet (it takes
    minutes to build, so the rest of the benchmark runs meanwhile); None when it is there."""
    if os.access(RUSTYPASTE, os.X_OK):
        return None
    os.makedirs(RUSTYPASTE_ROOT, exist_ok=True)
    build_log = os.path.join(RUSTYPASTE_ROOT, "install.log")
    log(f"cargo install rustypaste --locked --root {RUSTYPASTE_ROOT} in the background (log: {build_log}) ...")
    return subprocess.Popen(["cargo", "install", "rustypaste", "--locked", "--root", RUSTYPASTE_ROOT],
                            stdout=open(build_log, "ab"), stderr=subprocess.STDOUT, cwd=RUSTYPASTE_ROOT)


def rustypaste_binary(install: subprocess.Popen | None) -> str:
    if install is not None and install.wait() != 0:
        raise SystemExit(f"cargo install rustypaste failed; see {RUSTYPASTE_ROOT}/install.log")
    if not os.access(RUSTYPASTE, os.X_OK):
        raise SystemExit(f"no rustypaste at {RUSTYPASTE}")
    return RUSTYPASTE


def rustypaste_version() -> str:
    """The version cargo installed (rustypaste has no --version: it starts a server)."""
    try:
        with open(os.path.join(RUSTYPASTE_ROOT, ".crates.toml")) as crates:
            found = re.search(r'"rustypaste (\S+) ', crates.read())
    except OSError:
        found = None
    return f"rustypaste {found.group(1)}" if found else "rustypaste (version unknown)"


class Rustypaste(Process):
    """rustypaste with its upload folder in `folder`, no auth, uploads up to `max_mib` MiB."""

    def __init__(self, binary: str, folder: str, max_mib: int):
        self.folder = folder
        os.makedirs(os.path.join(folder, "upload"), exist_ok=True)
        self.port = free_port()
        config = os.path.join(folder, "config.toml")
        with open(config, "w") as f:
            f.write(f"""[server]
address = "127.0.0.1:{self.port}"
max_content_length = "{max_mib + 1}MiB"
upload_path = "{folder}/upload"
timeout = "30m"

[paste]
default_extension = "txt"
duplicate_files = true
""")
        env = dict(os.environ, CONFIG=config, RUST_LOG="warn")
        self.process = subprocess.Popen([binary], env=env, cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "server.log"), "ab"))
        wait_for_port(self.port, self.process)
        self.base = f"http://127.0.0.1:{self.port}"


def build_before(rev: str) -> str:
    """The release binary of blobdrop at git revision `rev` (`--before`), built once into the cache
    from a detached worktree, with a target folder of its own that later revisions reuse."""
    commit = subprocess.run(["git", "rev-parse", "--short=12", f"{rev}^{{commit}}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    binary = os.path.join(CACHE, f"blobdrop-{commit}")
    if os.access(binary, os.X_OK):
        return binary
    source = os.path.join(CACHE, "before-source")
    subprocess.run(["git", "worktree", "remove", "--force", source], cwd=ROOT, capture_output=True)
    subprocess.run(["git", "worktree", "add", "--detach", source, commit], cwd=ROOT, check=True, capture_output=True)
    try:
        log(f"cargo build --release of {commit} (--before) ...")
        target = os.path.join(CACHE, "before-target")
        if not os.path.isdir(target) and os.path.isdir(os.path.join(ROOT, "target/release")):
            # The dependencies are mostly the same: start from this build's, so only what changed
            # is compiled again (a build from nothing took 50 minutes on 2 busy cores).
            os.makedirs(target)
            subprocess.run(["cp", "-a", os.path.join(ROOT, "target/release"), target], check=True)
        env = dict(os.environ, CARGO_TARGET_DIR=target, SQLX_OFFLINE="true")
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "blobdrop"], cwd=source, env=env, check=True)
        os.makedirs(CACHE, exist_ok=True)
        shutil.copy2(os.path.join(CACHE, "before-target/release/blobdrop"), binary)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", source], cwd=ROOT, capture_output=True)
    return binary
