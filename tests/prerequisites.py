"""What a test does when something `make test` provides is missing: skip on a developer machine, fail under CI."""

from __future__ import annotations

import os

import pytest


def missing_prerequisite(message: str) -> None:
    """Skip with `message`; under CI (`CI` set), where `make test` installed it, fail: a skip would hide it."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
