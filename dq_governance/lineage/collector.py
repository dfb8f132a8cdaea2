"""`dqgov serve`: an OpenLineage HTTP collector on the standard library (ThreadingHTTPServer).

Compatible with the OpenLineage HTTP transport (Spark listener, openlineage-python):
`POST /api/v1/lineage` takes one event, a JSON list of events, or `{"events": [...]}`, optionally
gzip-encoded. Valid events are stored and answered with 201; bad JSON or an invalid single event
gives 400 with the reason; a body above the limit gives 413 without being read. `GET /api/v1/impact`
answers impact queries and `GET /healthz` liveness. When a bearer token is configured (an environment
variable), every endpoint but /healthz requires it, else 401. The token is never logged.

Browsers are kept out, token or not: a POST must be `Content-Type: application/json` (else 415), so a
cross-site "simple" request (text/plain, a form) cannot plant events; a request whose `Origin` is not this
server's own gets 403; and on a loopback address a `Host` that is not a loopback name with our port gets 403,
so a DNS-rebinding page cannot read impact answers. On another interface the token is the protection.
"""

from __future__ import annotations

import gzip
import hmac
import io
import ipaddress
import json
import logging
import socket
import sqlite3
import threading
import zlib
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
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
        # an IPv6 literal (`--host ::1`, `--host ::`) needs an IPv6 socket; names and IPv4 keep the default
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, CollectorHandler)
        # The names this server is reached by, for the Origin check: the host as given and the bound address.
        self.own_hosts = {address[0].lower(), str(self.server_address[0]).lower()}
        self.loopback = _is_loopback_host(str(self.server_address[0]))

    def server_close(self) -> None:
        """Close the socket and the store."""
        super().server_close()
        with self.write_lock:
            self.writer.close()

    @property
    def url(self) -> str:
        """http://host:port of the bound socket."""
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def is_own_host(self, authority: str, default_port: int | None) -> bool:
        """Whether `host[:port]` names this server: our port (or none given and `default_port` is ours),
        and on loopback any loopback name, elsewhere the bound host."""
        split = _split_authority(authority)
        if split is None:
            return False
        host, port = split
        if (port if port is not None else default_port) not in (None, self.server_address[1]):
            return False
        return _is_loopback_host(host) if self.loopback else host in self.own_hosts


class CollectorHandler(BaseHTTPRequestHandler):
    """One request: route, authorise, answer JSON."""

    server: CollectorServer
    protocol_version = "HTTP/1.1"
    server_version = "dqgov-collector"
    answered = False  # this request's answer has begun (set per request: one handler serves a keep-alive connection)

    def setup(self) -> None:
        """Disable Nagle: headers and body go out in separate writes, and keep-alive clients would wait 40 ms."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt: str, *args: Any) -> None:
        # The request line holds no secret (the token travels in a header), so it may be logged.
        log.info("%s %s", self.address_string(), fmt % args)

    # -- plumbing ----------------------------------------------------------
    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        self.answered = True
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

    def _same_site(self) -> bool:
        """Refuse (403) a browser's cross-site request: a foreign Origin, or on loopback a foreign Host."""
        if self.server.loopback:  # DNS rebinding: a foreign name resolving to 127.0.0.1 arrives with its own Host
            for host in self.headers.get_all("Host") or []:
                if not self.server.is_own_host(host, None):
                    self._error(HTTPStatus.FORBIDDEN, f"Host {host!r} is not a loopback name with port "
                                                      f"{self.server.server_address[1]}")
                    return False
        for origin in self.headers.get_all("Origin") or []:
            url = urlsplit(origin)
            own = (url.scheme == "http" and not (url.path or url.query or url.fragment)
                   and self.server.is_own_host(url.netloc, 80))  # an origin without a port is on port 80
            if not own:
                self._error(HTTPStatus.FORBIDDEN, f"Origin {origin!r} is not {self.server.url}: "
                                                  "cross-site requests are refused")
                return False
        return True

    def _authorised(self) -> bool:
        if not self.server.token:
            return True
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.server.token.encode()):
            return True
        self._error(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token")
        return False

    def _answering_on_error(self, handle: Callable[[], None]) -> None:
        """Run a request's handler; an error it did not expect is a 500 with one log line, never a dropped socket."""
        self.answered = False
        try:
            handle()
        except Exception as exc:  # noqa: BLE001 (the last resort: the client gets an answer, the server stays up)
            log.error("%s %s: %s", self.command, urlsplit(self.path).path, type(exc).__name__)
            if self.answered:  # the answer had begun (the client went away while it was sent): nothing more to say
                self.close_connection = True
                return
            try:
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"the request failed: {type(exc).__name__}")
            except OSError:
                self.close_connection = True

    # -- GET ---------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        """Route /healthz and /api/v1/impact."""
        self._answering_on_error(self._get)

    def _get(self) -> None:
        if not self._same_site():
            return
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
        self._answering_on_error(self._post)

    def _post(self) -> None:
        if not self._same_site():
            return
        if urlsplit(self.path).path != LINEAGE_PATH:
            self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}")
            return
        if not self._authorised():
            return
        content_type = self.headers.get("Content-Type")
        if not _is_json_content_type(content_type):
            # a browser sends text/plain or a form cross-site without a preflight; application/json needs one
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                        f"Content-Type must be application/json, not {content_type!r}")
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
            except (OSError, EOFError, zlib.error):
                self._error(HTTPStatus.BAD_REQUEST, "body is not valid gzip")
                return
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"invalid JSON: {exc}")
            return
        except RecursionError:
            self._error(HTTPStatus.BAD_REQUEST, "invalid JSON: nested too deeply")
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


def _is_json_content_type(value: str | None) -> bool:
    """application/json, optionally with a charset (the Spark listener sends `application/json; charset=UTF-8`)."""
    if value is None:
        return False
    media_type, *parameters = (part.strip() for part in value.split(";"))
    return media_type.lower() == "application/json" and all(p.lower().startswith("charset=") for p in parameters)


def _split_authority(authority: str) -> tuple[str, int | None] | None:
    """`host[:port]` (an IPv6 host in brackets) -> (lower-case host, port or None); None when malformed."""
    if authority.startswith("["):
        host, closed, rest = authority[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, colon, port_text = authority.partition(":")
        port_text = port_text if colon else None
    if port_text is None:
        return host.lower(), None
    if not (port_text.isascii() and port_text.isdigit()):
        return None
    return host.lower(), int(port_text)


def _is_loopback_host(host: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
