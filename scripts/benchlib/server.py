"""blobdrop as a process on loopback ports, started and stopped by their pid."""
import os, signal, socket, subprocess, time

from .constants import BINARY, SECRET
from .measure import cpu_seconds, proc_status


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
    """blobdrop with its defaults, on a database in `folder`, secret from the environment."""

    def __init__(self, folder: str, settings: dict | None = None):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.port = free_port()
        env = dict(os.environ, BLOBDROP_DB=os.path.join(folder, "blobdrop.db"), BLOBDROP_PORT=str(self.port),
                   BLOBDROP_SHARED_SECRET=SECRET, RUST_LOG="warn", **(settings or {}))
        self.process = subprocess.Popen([BINARY], env=env, stderr=open(os.path.join(folder, "server.log"), "ab"))
        wait_for_port(self.port, self.process)
        self.base = f"http://127.0.0.1:{self.port}"
