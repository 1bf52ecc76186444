"""oidc-provider-mock (PyPI) for tests/api/oidc.rs: serves on 127.0.0.1 at a port the OS picks,
prints that port on its first line, and runs until it is killed (by its pid).

Clients must register (POST /oauth2/clients), so a wrong client secret is refused (401), and
authorization requests must carry a nonce."""

import logging
import os
import socket

os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on loopback

import uvicorn  # noqa: E402
from oidc_provider_mock import app  # noqa: E402

listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)
logging.basicConfig(level=logging.WARNING)
provider = app(require_client_registration=True, require_nonce=True)
config = uvicorn.Config(provider, interface="wsgi", log_config=None, log_level="warning")
uvicorn.Server(config).run(sockets=[listener])
