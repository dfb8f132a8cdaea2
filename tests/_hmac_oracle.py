"""Python's own answer for masked CPFs: what every HMAC engine (JVM UDF, sha2) on every session must produce."""

from __future__ import annotations

import csv
import hashlib
import hmac
import re
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "examples" / "data"


def pseudonym(key: str, cpf: str) -> str:
    """HMAC-SHA256 of the CPF's digits under `key`, hex."""
    return hmac.new(key.encode(), re.sub(r"\D", "", cpf).encode(), hashlib.sha256).hexdigest()


def raw_cpfs(name: str, key_column: str) -> dict[str, str]:
    """{key: raw cpf} of examples/data/<name>.csv."""
    with open(DATA / f"{name}.csv", newline="") as handle:
        return {row[key_column]: row["cpf"] for row in csv.DictReader(handle)}
