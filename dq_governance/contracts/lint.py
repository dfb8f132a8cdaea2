"""Lint contract files: every problem of every file, one positioned line each.

Works on any format `load` detects; never imports Spark.
"""

from __future__ import annotations

from pathlib import Path

from dq_governance.contracts.load import check_document
from dq_governance.contracts.source import LintIssue, read_source
from dq_governance.errors import ContractError

__all__ = ["CONTRACT_SUFFIXES", "LintIssue", "contract_files", "lint_path"]

#: file suffixes linted inside a directory
CONTRACT_SUFFIXES = (".yaml", ".yml", ".json")


def lint_path(path: str | Path) -> list[LintIssue]:
    """All problems of one contract file, or of a project config (`.dqgov/config.yaml`), sorted by position."""
    if _is_project_config(Path(path)):
        from dq_governance.project_config import project_config_issues

        return project_config_issues(path)
    try:
        doc = read_source(path)
    except ContractError as exc:  # unreadable, or a YAML / JSON syntax error: nothing more to check
        loc = exc.location
        return [LintIssue(str(path), loc.line if loc else None, loc.column if loc else None, exc.field or "",
                          exc.message)]
    return check_document(doc).issues


def contract_files(paths: list[str | Path]) -> tuple[list[Path], list[LintIssue]]:
    """Expand directories to the contract files directly inside them; missing paths are issues."""
    files: list[Path] = []
    issues: list[LintIssue] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in CONTRACT_SUFFIXES)
            if not found:
                issues.append(LintIssue(str(path), None, None, "",
                                        f"no contract files ({', '.join(CONTRACT_SUFFIXES)}) in this directory"))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            issues.append(LintIssue(str(path), None, None, "", "no such file or directory"))
    return files, issues


def _is_project_config(path: Path) -> bool:
    return path.name == "config.yaml" and path.parent.name == ".dqgov"


def with_project_config(files: list[Path], directory: Path | None = None) -> list[Path]:
    """`files` plus the project config of `directory` (default: the current one) when it exists."""
    config = (directory or Path.cwd()) / ".dqgov" / "config.yaml"
    if config.is_file() and not any(_is_project_config(f) and f.resolve() == config.resolve() for f in files):
        return [*files, config]
    return files
