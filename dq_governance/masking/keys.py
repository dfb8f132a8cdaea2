"""Masking keys: resolved from an env var or a key file, carried with an id, never printed.

The secret lives only in `MaskingKey._secret`; repr/str show the key id and where it came from.
Error messages name the env var, the key file or the contract field, never the key, nor a path taken from
an env var's value (a variable meant to name a file sometimes holds the key itself).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path

from dq_governance.contracts.model import MaskingPolicy
from dq_governance.errors import ConfigError

DEFAULT_KEY_ENV = "DQGOV_MASKING_KEY"
#: HMAC-SHA-256 keys shorter than 128 bits are refused (PCI DSS 3.5.1.1 minimum)
MIN_KEY_BYTES = 16
SHA256_BLOCK = 64


@dataclass(frozen=True)
class MaskingKey:
    """A secret HMAC key with a public id (recorded next to masked columns) and a source label."""

    key_id: str
    source: str
    _secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self._secret) < MIN_KEY_BYTES:
            raise ConfigError(
                f"masking key from {self.source} is too short ({len(self._secret)} bytes; "
                f"need at least {MIN_KEY_BYTES}, ideally 32 random bytes)"
            )

    def __repr__(self) -> str:
        return f"MaskingKey(key_id={self.key_id!r}, source={self.source!r})"

    __str__ = __repr__

    def hmac_hex(self, value: str) -> str:
        """HMAC-SHA-256 of one already-normalised value, in hex (driver-side reference, tests)."""
        return hmac.new(self._secret, value.encode("utf-8"), hashlib.sha256).hexdigest()

    @property
    def fingerprint(self) -> str:
        """A public id derived from the secret itself (two different keys never share it, unlike key_id)."""
        return fingerprint(self._secret)

    def pads(self) -> tuple[bytes, bytes]:
        """The HMAC inner and outer pads (RFC 2104): key material, to be kept out of plans."""
        key = self._secret
        if len(key) > SHA256_BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(SHA256_BLOCK, b"\0")
        return bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)

    @classmethod
    def from_secret(cls, secret: bytes | str, key_id: str | None = None, source: str = "argument") -> MaskingKey:
        """Build a key from its bytes (a str is UTF-8 encoded); the id defaults to a fingerprint."""
        raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        return cls(key_id=key_id or fingerprint(raw), source=source, _secret=raw)


def fingerprint(secret: bytes) -> str:
    """A short public id of a key: HMAC of a fixed label under the key, so it reveals nothing of it."""
    return "fp-" + hmac.new(secret, b"dqgov-key-id", hashlib.sha256).hexdigest()[:12]


def resolve_key(policy: MaskingPolicy | None = None, *, base_dir: Path | None = None) -> MaskingKey:
    """The key a policy names: its key_file, else env `key_env`, else the file named by `<key_env>_FILE`."""
    policy = policy or MaskingPolicy()
    env_name = policy.key_env or DEFAULT_KEY_ENV
    if policy.key_file:
        expanded = os.path.expandvars(policy.key_file)
        path = Path(os.path.expanduser(expanded))
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        # a path built from an env var's value may be the secret itself (a misused variable): name the field
        source = f"key file {path}" if expanded == policy.key_file else "the key file masking.key_file names"
        return _from_file(path, policy.key_id, source)
    value = os.environ.get(env_name)
    if value:
        return MaskingKey.from_secret(value.strip(), policy.key_id, f"env var {env_name}")
    file_env = f"{env_name}_FILE"
    if os.environ.get(file_env):
        # the variable's value is never shown: it is sometimes set to the key instead of a path
        return _from_file(Path(os.environ[file_env]), policy.key_id, f"the key file env var {file_env} names")
    raise ConfigError(
        f"masking key missing: set env var {env_name} (or {file_env} to a key file, or masking.key_file "
        "in the contract); refusing to mask without a key"
    )


def _from_file(path: Path, key_id: str | None, source: str) -> MaskingKey:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"masking key missing: cannot read {source}: {exc.strerror}") from None
    # one trailing line break is an editor artefact; any other byte (a binary key's 0x20 or 0x0c) is key material
    raw = raw.removesuffix(b"\r\n") if raw.endswith(b"\r\n") else raw.removesuffix(b"\n")
    if not raw:
        raise ConfigError(f"masking key missing: {source} is empty")
    return MaskingKey.from_secret(raw, key_id, source)
