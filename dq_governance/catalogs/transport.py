"""HTTP transport for catalog pushers: one session, timeouts, retries with backoff, secret-safe errors.

The dry-run transport in `dryrun.py` has the same `request` signature, so a pusher never knows
whether it talks to a server or writes request files.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

import requests
import requests.adapters

from dq_governance.errors import CatalogError, ConfigError
from dq_governance.scrub import redact
from dq_governance.urls import http_url_problem

log = logging.getLogger(__name__)

#: status codes worth retrying: rate limiting and server-side trouble
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_MAX_SERVER_MESSAGE = 300


class Secret:
    """A token holder whose repr and str never show the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        """The raw value, for the Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


_BEARER = re.compile(r"(?i)\bbearer\s+[^\s'\",]+")


def load_token(env_name: str, environ: dict[str, str] | None = None) -> Secret | None:
    """The token from `$ENV_NAME` or from the file named by `$ENV_NAME_FILE`; None when neither is set."""
    env = os.environ if environ is None else environ
    value = env.get(env_name)
    if value:
        return _one_token(value.strip(), env_name)
    file_name = env.get(f"{env_name}_FILE")
    if file_name:
        path = Path(file_name)
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"{env_name}_FILE: cannot read token file {path}: {exc.strerror}") from None
        except UnicodeDecodeError:  # its message quotes the offending byte of the token
            raise ConfigError(f"{env_name}_FILE: token file {path} is not UTF-8 text") from None
        if not text:
            raise ConfigError(f"{env_name}_FILE: token file {path} is empty")
        return _one_token(text, f"{env_name}_FILE ({path})")
    return None


def _one_token(text: str, source: str) -> Secret:
    """The token, refused when it holds whitespace or control characters (a second line, a comment) or any
    character outside printable ASCII (a typographic quote picked up by copy-paste): an HTTP header cannot
    carry them, and the HTTP library's own error would quote the whole value. Messages never show it."""
    problem = token_problem(text)
    if problem:
        raise ConfigError(f"{source}: {problem}; give the token alone")
    return Secret(text)


def token_problem(text: str) -> str | None:
    """Why `text` cannot go in an Authorization header (never quoting it), or None when it can."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        return "the token holds whitespace or control characters (a second line?)"
    if any(not 33 <= ord(ch) <= 126 for ch in text):
        return "the token holds a character that is not printable ASCII (a typographic quote from copy-paste?)"
    return None


def check_base_url(catalog: str, url: str | None) -> None:
    """Refuse (ConfigError) a catalog URL that is not http(s), names no host or port, or carries a query."""
    problem = http_url_problem(url or "", base=True)
    if problem is not None:
        raise ConfigError(f"{catalog}: catalog URL {problem}, got {redact(url or '')!r}")


@dataclass
class Response:
    """What a pusher needs from a reply: the status and the decoded JSON body (None when empty)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """2xx."""
        return 200 <= self.status < 300


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; `Retry-After` wins when the server sends it."""

    attempts: int = 5  # total tries, the first one included
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before try number `attempt + 1` (attempt counts from 0)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        # "equal jitter": half fixed, half random, so waits grow but clients do not move in lockstep
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class HttpTransport:
    """One `requests.Session` per catalog: auth headers, timeouts, retries, errors naming the entity."""

    dry_run = False

    def __init__(
        self,
        base_url: str,
        catalog: str,
        *,
        token: Secret | None = None,
        headers: dict[str, str] | None = None,
        timeout: tuple[float, float] = (5.0, 30.0),
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        session: requests.Session | None = None,
        pool_size: int = 10,
    ):
        check_base_url(catalog, base_url)
        self.base_url = base_url.rstrip("/")
        self.catalog = catalog
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.session = session or requests.Session()
        if session is None:
            adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=max(pool_size, 1))
            self.session.mount("http://", adapter)
            self.session.mount("https://", adapter)
        self._count_lock = threading.Lock()
        self.session.headers.update({"Accept": "application/json", "Content-Type": "application/json"})
        self.session.headers.update(headers or {})
        self._token = token
        if token:
            _one_token(token.reveal(), catalog)  # a token handed in directly, not read by load_token
            self.session.headers["Authorization"] = f"Bearer {token.reveal()}"
        self.requests_sent = 0

    def __repr__(self) -> str:
        return f"HttpTransport({self.catalog!r}, {self.base_url!r}, token={'set' if self._token else 'none'})"

    def close(self) -> None:
        """Close the pooled connections."""
        self.session.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        entity: str,
        body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        allow: tuple[int, ...] = (),
        retry_statuses: frozenset[int] = RETRY_STATUSES,
        taken: Callable[[], bool] | None = None,
    ) -> Response:
        """Send one request; retry transient failures; raise CatalogError on other errors.

        `allow` lists non-2xx statuses the caller handles itself (404 on a read means "absent"). `taken`, for a
        write that is not idempotent (a POST that adds a record): asked before each retry whether the server
        stored an earlier try after all (a 5xx or a timeout can come after the write); if so, nothing is resent.
        """
        url = self.base_url + path + (("?" + urlencode(params)) if params else "")
        data = None if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        last_problem = ""
        for attempt in range(self.retry.attempts):
            retry_after: float | None = None
            if attempt and taken is not None and taken():
                log.info("%s %s %s: the server stored the earlier try; not sent again", self.catalog, method, path)
                return Response(200)
            try:
                with self._count_lock:
                    self.requests_sent += 1
                reply = self.session.request(method, url, data=data, headers=headers, timeout=self.timeout)
            except (requests.ConnectionError, requests.Timeout) as exc:
                last_problem = f"{type(exc).__name__}"
                log.warning("%s %s %s: %s (try %d of %d)", self.catalog, method, path, last_problem,
                            attempt + 1, self.retry.attempts)
            except requests.RequestException as exc:  # not transient; its text may quote a header (the token)
                raise CatalogError(f"{self.catalog} {method} {path}: {type(exc).__name__}") from None
            except UnicodeError as exc:  # http.client encodes headers as Latin-1; never quote what it refused
                raise CatalogError(f"{self.catalog} {method} {path}: {type(exc).__name__} in a request header") \
                    from None
            else:
                if reply.status_code in allow or 200 <= reply.status_code < 300:
                    log.debug("%s %s %s -> %d", self.catalog, method, path, reply.status_code)
                    return Response(reply.status_code, _json_or_none(reply), dict(reply.headers))
                if reply.status_code not in retry_statuses:
                    raise self._error(method, path, entity, reply)
                last_problem = f"HTTP {reply.status_code}: {self._server_message(reply)}"
                retry_after = parse_retry_after(reply.headers.get("Retry-After"))
                log.warning("%s %s %s: %s (try %d of %d)", self.catalog, method, path, last_problem,
                            attempt + 1, self.retry.attempts)
            if attempt + 1 < self.retry.attempts:
                self.sleep(self.retry.delay(attempt, retry_after, self.rng))
        raise CatalogError(self._redact(
            f"{self.catalog}: {method} {path} for {entity} failed after {self.retry.attempts} tries: {last_problem}"
        ))

    # -- errors ----------------------------------------------------------------
    def _error(self, method: str, path: str, entity: str, reply: requests.Response) -> CatalogError:
        message = self._server_message(reply)
        return CatalogError(self._redact(
            f"{self.catalog} rejected {method} {path} for {entity}: HTTP {reply.status_code}: {message}"
        ))

    def _server_message(self, reply: requests.Response) -> str:
        body = _json_or_none(reply)
        if isinstance(body, dict):
            for key in ("message", "errorMessage", "error", "exceptionClass"):
                if isinstance(body.get(key), str) and body[key]:
                    return self._redact(body[key])[:_MAX_SERVER_MESSAGE]  # cut after: a cut token is no match
        text = (reply.text or reply.reason or "").strip().replace("\n", " ")
        return self._redact(text)[:_MAX_SERVER_MESSAGE] or "(no message)"

    def _redact(self, text: str) -> str:
        # A server may echo the Authorization header back; never let it through.
        if self._token and self._token.reveal():
            text = text.replace(self._token.reveal(), "***")
        return _BEARER.sub("Bearer ***", text)  # any credential the server quotes, ours or not


def _json_or_none(reply: requests.Response) -> Any:
    if not reply.content:
        return None
    try:
        return reply.json()
    except ValueError:
        return None
