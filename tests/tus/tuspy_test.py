"""tuspy (the tus project's Python client, PyPI `tuspy`) against the real blobdrop binary: chunks
sent with `upload_chunk` and a checksum each, the server killed with SIGKILL mid-upload and started
again on the same database, then the upload resumed from the URL tuspy stored for the file, and
finished byte-identical by SHA-256."""

import hashlib
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import requests
from tusclient import client
from tusclient.storage.filestorage import FileStorage

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("BLOBDROP_BIN", HERE / "../../target/debug/blobdrop")).resolve()
SECRET = "tus-client-test-secret-0123456789"
AUTH = {"Authorization": f"Bearer {SECRET}"}
MIB = 1024 * 1024


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(db, port, log):
    env = dict(os.environ, BLOBDROP_DB=str(db), BLOBDROP_PORT=str(port), BLOBDROP_SHARED_SECRET=SECRET)
    server = subprocess.Popen([str(BIN)], env=env, stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(200):
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).ok:
                return server
        except requests.ConnectionError:
            pass
        time.sleep(0.05)
    server.kill()
    raise RuntimeError("the server did not start")


class TuspyResumes(unittest.TestCase):
    def test_upload_chunk_then_a_killed_server_then_resume_from_the_stored_url(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            data = random.Random(15).randbytes(5 * MIB + 777)
            path = folder / "from-tuspy.bin"
            path.write_bytes(data)
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            log = open(folder / "server.log", "wb")
            server = start_server(folder / "blobdrop.db", port, log)
            try:
                storage = FileStorage(str(folder / "tuspy-urls.json"))
                uploader = client.TusClient(f"{base}/api/uploads", headers=AUTH).uploader(
                    str(path),
                    chunk_size=MIB + 1000,
                    metadata={"filename": "from-tuspy.bin"},
                    store_url=True,
                    url_storage=storage,
                    upload_checksum=True,
                )
                for _ in range(2):
                    uploader.upload_chunk()
                sent = uploader.offset
                self.assertEqual(sent, 2 * (MIB + 1000))

                server.send_signal(signal.SIGKILL)
                server.wait()
                server = start_server(folder / "blobdrop.db", port, log)

                resumed = client.TusClient(f"{base}/api/uploads", headers=AUTH).uploader(
                    str(path), chunk_size=2 * MIB, store_url=True, url_storage=storage, upload_checksum=True
                )
                self.assertEqual(resumed.url, uploader.url, "resumed from the stored URL")
                self.assertEqual(resumed.offset, sent, "the server kept every committed byte")
                resumed.upload()

                files = requests.get(f"{base}/api/files", headers=AUTH, timeout=10).json()
                self.assertEqual([f["filename"] for f in files], ["from-tuspy.bin"])
                self.assertEqual(files[0]["sha256"], hashlib.sha256(data).hexdigest())
                downloaded = requests.get(files[0]["url"], timeout=30).content
                self.assertEqual(hashlib.sha256(downloaded).hexdigest(), hashlib.sha256(data).hexdigest())
            finally:
                server.kill()
                server.wait()
                log.close()


if __name__ == "__main__":
    unittest.main()
