"""Kept for callers of the old name: `java_class` lives in `dq_governance.session` (classic vs Connect)."""

from __future__ import annotations

from dq_governance.session import java_class

__all__ = ["java_class"]
