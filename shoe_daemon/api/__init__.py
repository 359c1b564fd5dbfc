"""The daemon's HTTP API (FastAPI on uvicorn, in the daemon's loop): see docs/api.md.

``create_app(daemon)`` builds the app; ``ApiServer(daemon)`` runs it in the
daemon's event loop (``Daemon.start_api`` does that when ``[api] enabled``).
"""

from shoe_daemon.api.app import create_app
from shoe_daemon.api.server import ApiServer

__all__ = ["ApiServer", "create_app"]
