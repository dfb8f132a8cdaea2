"""`dqgov serve`: an OpenLineage HTTP collector on the standard library (ThreadingHTTPServer).

Compatible with the OpenLineage HTTP transport (Spark listener, openlineage-python):
`POST /api/v1/lineage` takes one event, a JSON list of events, or `{"events": [...]}`, optionally
gzip-encoded. Valid events are stored and answered with 201; bad JSON or an invalid single event
gives 400 with the reason; a body above the limit gives 413 without being read. `GET /api/v1/impact`
answers impact queries and `GET /healthz` liveness. When a bearer token is configured (an environment
variable), every endpoint but /healthz requires it, else 401. The token is never logged.
"""

from __future__ import annotations

import gzip
import hmac
import io
import json
import logging
import socket
import sqlite3
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dq_governance.errors import DqGovernanceError
from dq_governance.lineage.graph import LineageGraph, MalformedEvent, validate_event
from dq_governance.lineage.impact import FORMATS, impact, render, resolve_target

log = logging.getLogger(__name__)

LINEAGE_PATH = "/api/v1/lineage"
IMPACT_PATH = "/api/v1/impact"
DEFAULT_MAX_BODY = 5 * 1024 * 1024
TOKEN_ENV = "DQGOV_COLLECTOR_TOKEN"
_CONTENT_TYPES = {"json": "application/json", "html": "text/html; charset=utf-8", "table": "text/plain; charset=utf-8",
                  "mermaid": "text/plain; charset=utf-8", "dot": "text/vnd.graphviz; charset=utf-8"}


class CollectorServer(ThreadingHTTPServer):
    """The HTTP server; holds the store path, the body limit and the optional token."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], db: str | Path, *, max_body: int = DEFAULT_MAX_BODY,
                 token: str | None = None):
        self.db_path = Path(db)
        # One long-lived writer connection, used under a lock; readers open their own (WAL lets them run
        # beside the writer). Keeping it open also spares a checkpoint each time a last connection closes.
        self.writer = LineageGraph(self.db_path)
        self.max_body = max_body
        self.token = token or None
        self.write_lock = threading.Lock()
        super().__init__(address, CollectorHandler)

    def server_close(self) -> None:
        """Close the socket and the store."""
        super().server_close()
        with self.write_lock:
            self.writer.close()

    @property
    def url(self) -> str:
        """http://host:port of the bound socket."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class CollectorHandler(BaseHTTPRequestHandler):
    """One request: route, authorise, answer JSON."""

    server: CollectorServer
    protocol_version = "HTTP/1.1"
    server_version = "dqgov-collector"

    def setup(self) -> None:
        """Disable Nagle: headers and body go out in separate writes, and keep-alive clients would wait 40 ms."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt: str, *args: Any) -> None:
        # The request line holds no secret (the token travels in a header), so it may be logged.
        log.info("%s %s", self.address_string(), fmt % args)

    # -- plumbing ----------------------------------------------------------
    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = (json.dumps(body) + "\n").encode() if not isinstance(body, (str, bytes)) else (
            body.encode() if isinstance(body, str) else body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if status == HTTPStatus.UNAUTHORIZED:
            self.send_header("WWW-Authenticate", 'Bearer realm="dqgov"')
        if status >= 400 and self.command == "POST":
            self.send_header("Connection", "close")  # the unread body must not be parsed as the next request
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, reason: str) -> None:
        self._send(status, {"error": HTTPStatus(status).phrase, "reason": reason})

    def _authorised(self) -> bool:
        if not self.server.token:
            return True
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.server.token.encode()):
            return True
        self._error(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token")
        return False

    # -- GET ---------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        """Route /healthz and /api/v1/impact."""
        url = urlsplit(self.path)
        if url.path == "/healthz":
            self._send(HTTPStatus.OK, {"status": "ok"})
            return
        if not self._authorised():
            return
        if url.path != IMPACT_PATH:
            self._error(HTTPStatus.NOT_FOUND, f"no route {url.path}")
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        target = query.get("target") or query.get("dataset")
        if not target:
            self._error(HTTPStatus.BAD_REQUEST, "query parameter `target` (DATASET[.COLUMN]) is required")
            return
        fmt = query.get("format", "json")
        if fmt not in FORMATS:
            self._error(HTTPStatus.BAD_REQUEST, f"format must be one of {', '.join(FORMATS)}")
            return
        try:
            depth = int(query["depth"]) if "depth" in query else None
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST, "depth must be an integer")
            return
        try:
            with LineageGraph(self.server.db_path) as graph:
                resolved = resolve_target(graph, target, query.get("namespace"))
                result = impact(graph, resolved, query.get("direction", "downstream"), depth)
                text = render(result, fmt)
        except DqGovernanceError as exc:
            status = HTTPStatus.NOT_FOUND if "no dataset" in str(exc) or "no known column" in str(exc) else HTTPStatus.BAD_REQUEST
            self._error(status, str(exc))
            return
        self._send(HTTPStatus.OK, text, _CONTENT_TYPES[fmt])

    # -- POST --------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802
        """Accept OpenLineage events at /api/v1/lineage."""
        if urlsplit(self.path).path != LINEAGE_PATH:
            self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}")
            return
        if not self._authorised():
            return
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
            return
        try:
            length = int(length_text)
        except ValueError:
            length = -1
        if length < 0:
            self._error(HTTPStatus.BAD_REQUEST, "Content-Length is not a non-negative number")
            return
        if length > self.server.max_body:
            if length <= 16 * self.server.max_body:
                _drain(self.rfile, length)  # read it, so the client sees the 413 instead of a reset
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                        f"body of {length} bytes is above the limit of {self.server.max_body} bytes")
            return
        raw = self.rfile.read(length)
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            try:
                raw = _gunzip_bounded(raw, self.server.max_body)
            except OverflowError:
                self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "decompressed body is above the limit")
                return
            except (OSError, EOFError):
                self._error(HTTPStatus.BAD_REQUEST, "body is not valid gzip")
                return
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"invalid JSON: {exc}")
            return
        single = isinstance(payload, dict) and "events" not in payload
        events = [payload] if single else payload.get("events") if isinstance(payload, dict) else payload
        if not isinstance(events, list):
            self._error(HTTPStatus.BAD_REQUEST, "body must be an event, a list of events or {\"events\": [...]}")
            return
        problems = []
        for index, event in enumerate(events):
            try:
                validate_event(event)
            except MalformedEvent as exc:
                problems.append(f"event {index}: {exc}" if not single else str(exc))
        if single and problems:
            self._error(HTTPStatus.BAD_REQUEST, f"invalid OpenLineage event: {problems[0]}")
            return
        if events and len(problems) == len(events):
            self._error(HTTPStatus.BAD_REQUEST, f"no valid event in the batch: {problems[0]}")
            return
        try:
            with self.server.write_lock:
                stats = self.server.writer.ingest_events((f"{LINEAGE_PATH}[{i}]", e) for i, e in enumerate(events))
        except sqlite3.Error as exc:  # a locked or broken store: the client may retry later
            log.error("lineage store %s: %s", self.server.db_path, exc)
            self._error(HTTPStatus.SERVICE_UNAVAILABLE, "the lineage store cannot take events now")
            return
        self._send(HTTPStatus.CREATED, {"stored": stats.stored, "duplicates": stats.duplicates,
                                        "skipped": stats.skipped, "errors": stats.errors})


def _drain(stream: Any, length: int) -> None:
    """Read and discard `length` bytes in small chunks."""
    while length > 0:
        chunk = stream.read(min(length, 65536))
        if not chunk:
            return
        length -= len(chunk)


def _gunzip_bounded(raw: bytes, limit: int) -> bytes:
    """Decompress, refusing to grow past the limit (a gzip bomb stays small)."""
    with gzip.GzipFile(fileobj=io.BytesIO(raw)) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OverflowError
    return data


def make_server(db: str | Path, host: str = "127.0.0.1", port: int = 5000, *, max_body: int = DEFAULT_MAX_BODY,
                token: str | None = None) -> CollectorServer:
    """Bind a collector (port 0 picks a free port); call serve_forever() to run it."""
    return CollectorServer((host, port), db, max_body=max_body, token=token)
