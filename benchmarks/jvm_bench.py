"""Run one of the listeners/ module's JVM micro-benchmarks through Maven and read its JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def command(test_class: str) -> list[str]:
    """The Maven command that runs `test_class` (a benchmark class surefire does not pick up by itself)."""
    return ["mvn", "-q", "-f", str(REPO / "listeners" / "pom.xml"), "test", f"-Dtest={test_class}",
            "-Dsurefire.failIfNoSpecifiedTests=false"]


def run(test_class: str, name: str) -> dict[str, Any] | None:
    """The benchmark's JSON line (`{"benchmark": name, ...}`) plus the command; None (output on stderr) on failure."""
    argv = command(test_class)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(f'{{"benchmark": "{name}"')]
    if proc.returncode != 0 or not lines:
        sys.stderr.write((proc.stdout + proc.stderr)[-3000:])
        return None
    result = json.loads(lines[-1])
    result["command"] = " ".join(argv[:3] + ["listeners/pom.xml"] + argv[4:])
    return result
