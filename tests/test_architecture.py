"""The data flows one way: no import cycle in the package, and the engine imports nothing downstream.

Every import counts, also those inside functions (a lazy import is still a dependency); imports under
`if TYPE_CHECKING:` do not (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dq_governance"


def _modules() -> dict[str, set[str]]:
    files = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dq_governance"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in files else node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("dq_governance"))
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    graph = _modules()
    assert len(graph) > 80  # the walk found the package
    assert _cycles(graph) == []


def test_the_checks_import_nothing_downstream():
    downstream = ("dq_governance.publish", "dq_governance.pipeline", "dq_governance.api", "dq_governance.lineage",
                  "dq_governance.catalogs", "dq_governance.cli")
    found = {(module, dep) for module, deps in _modules().items() if module.startswith("dq_governance.checks")
             for dep in deps if dep.startswith(downstream)}
    assert found == set()


def test_the_detector_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
