"""The http(s) URLs a user gives (catalog servers, lineage endpoints): what makes one unusable, in words.

Spark-free and secret-free: the caller names the URL (redacted) in its own error line.
"""

from __future__ import annotations

from urllib.parse import urlsplit


def http_url_problem(url: str, *, base: bool = False) -> str | None:
    """Why `url` cannot be an http(s) endpoint, or None; `base`: an API path is appended, so no query or fragment."""
    text = url.strip()
    if not text.startswith(("http://", "https://")):
        return "must start with http:// or https://"
    if any(char.isspace() for char in text):
        return "holds whitespace"
    parts = urlsplit(text)
    try:
        bad_port = parts.port == 0  # urllib refuses the others (not a number, past 65535) itself
    except ValueError:
        bad_port = True
    if bad_port:
        return "has a port that is not a number from 1 to 65535"
    if not parts.hostname:
        return "names no host"
    if base and (parts.query or parts.fragment):
        return "is a base URL: its query or fragment would come before the API path"
    return None
