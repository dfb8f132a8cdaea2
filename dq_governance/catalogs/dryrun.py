"""Dry run: record every request a catalog would receive as numbered JSON files; send nothing.

Each file is `{"method": ..., "path": ..., "body": ...}`, named `NNNN-METHOD-<path slug>.json`, in the
order the pusher issued them (contracts sorted by name, rules in contract order), so two dry runs of
the same input give the same files. Replies are simulated by the pusher's `simulate` hook; names that
a server would resolve to ids get placeholder ids, which are recorded for the summary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from dq_governance.catalogs.transport import Response
from dq_governance.errors import ConfigError

Responder = Callable[[str, str, Any], Response]

_FILE_RE = re.compile(r"^\d{4,}-[A-Z]+-.*\.json$")
PLACEHOLDER_PREFIX = "placeholder:"


def placeholder_id(kind: str, name: str) -> str:
    """An id that is plainly not a real one: `placeholder:<kind>:<name>`."""
    return f"{PLACEHOLDER_PREFIX}{kind}:{name}"


def is_placeholder(value: Any) -> bool:
    """True for ids made by `placeholder_id`."""
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX)


def _absent(method: str, path: str, body: Any) -> Response:
    """Default simulation: nothing exists yet; writes succeed and echo their body."""
    if method == "GET":
        return Response(404, {"message": "dry run: assumed absent"})
    return Response(200, body if isinstance(body, dict) else None)


class DryRunTransport:
    """Same interface as HttpTransport; writes request files instead of sending."""

    dry_run = True

    def __init__(self, out_dir: str | Path, catalog: str, simulate: Responder | None = None):
        self.out_dir = Path(out_dir)
        self.catalog = catalog
        self.simulate: Responder = simulate or _absent
        #: optional pusher hook naming a request for its file name (e.g. the aspect of a DataHub proposal)
        self.describe: Callable[[str, str, Any], str | None] | None = None
        self.count = 0
        self.requests_sent = 0
        self.placeholders: dict[str, str] = {}  # "team sales-data-team" -> placeholder id
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--out {self.out_dir}: cannot create directory: {exc.strerror}") from None
        for old in self.out_dir.iterdir():
            # Only files this module wrote earlier; anything else in the directory is left alone.
            if old.is_file() and _FILE_RE.match(old.name):
                old.unlink()

    def __repr__(self) -> str:
        return f"DryRunTransport({self.catalog!r}, {str(self.out_dir)!r})"

    def close(self) -> None:
        """Nothing to close."""

    def placeholder(self, kind: str, name: str) -> str:
        """A placeholder id for a name the server would resolve, remembered for the summary."""
        value = placeholder_id(kind, name)
        self.placeholders[f"{kind} {name}"] = value
        return value

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
        retry_statuses: frozenset[int] = frozenset(),
        taken: Callable[[], bool] | None = None,  # a dry run sends each request once
    ) -> Response:
        """Record the request as the next numbered file and return the simulated reply."""
        full_path = path + (("?" + urlencode(params)) if params else "")
        self.count += 1
        self.requests_sent += 1
        short = (self.describe(method, full_path, body) if self.describe else None) or path.split("?")[0].strip("/")
        short = short[len("api/v1/"):] if short.startswith("api/v1/") else short
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", short)[:80].strip("_")
        name = f"{self.count:04d}-{method}-{slug}.json"
        record = {"method": method, "path": full_path, "body": body}
        (self.out_dir / name).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        reply = self.simulate(method, full_path, body)
        if not reply.ok and reply.status not in allow:
            # A simulated rejection would be a bug in the simulation, not a server answer.
            raise ConfigError(f"dry run: {method} {full_path} for {entity} has no simulated reply")
        return reply
