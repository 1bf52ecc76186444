"""nginx serving plain files with sendfile: the download baseline."""
import os, shutil, signal, subprocess

from .measure import cpu_seconds, log
from .server import Process, free_port, wait_for_port


def ensure_nginx() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if found:
        return found
    if os.geteuid() != 0:
        raise SystemExit("nginx is missing: install nginx-light (or nginx), or run as root to let this script do it")
    log("installing nginx-light ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nginx-light"], check=True, env=env, stdout=subprocess.DEVNULL)
    return "/usr/sbin/nginx"


def nginx_version() -> str:
    return subprocess.run([ensure_nginx(), "-v"], capture_output=True, text=True).stderr.strip().removeprefix("nginx version: ")


class Nginx(Process):
    """nginx on a loopback port with its own minimal config, serving `root` with sendfile."""

    stop_signal = signal.SIGQUIT

    def __init__(self, binary: str, folder: str, root: str):
        self.port = free_port()
        os.makedirs(folder, exist_ok=True)
        conf = os.path.join(folder, "nginx.conf")
        user = "user root root;" if os.geteuid() == 0 else ""
        with open(conf, "w") as f:
            f.write(f"""{user}
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    default_type application/octet-stream;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:{self.port};
        root {root};
    }}
}}
""")
        self.process = subprocess.Popen([binary, "-c", conf, "-e", f"{folder}/error.log"])
        wait_for_port(self.port, self.process)
        self.base = f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """CPU time of the master and its worker (the one that serves)."""
        pid = self.process.pid
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return cpu_seconds(pid) + sum(cpu_seconds(int(child)) for child in children.read().split())
