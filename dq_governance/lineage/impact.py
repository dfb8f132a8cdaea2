"""Impact analysis over the lineage store: what a dataset or column reaches, through which jobs, and who to tell.

Column-level impact follows field -> field edges. Where a job has no column lineage for an output,
the walk falls back to dataset level through that job and marks the hit `coarse`. A column that a
job uses for the whole output (filter, join, group by: the facet's `dataset` list) reaches that
output as a dataset. The walk is breadth-first with a visited set, so cycles end and each hit
carries a shortest path; `depth` caps the number of job hops. A nested column (`address.city`) starts
from its struct columns too, and a struct from its nested fields (`column_fields`): Spark's column
lineage names the top-level column.
"""

from __future__ import annotations

import os

import html
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator

from dq_governance.errors import InputDataError
from dq_governance.lineage.graph import LineageGraph

DIRECTIONS = ("downstream", "upstream", "both")
FORMATS = ("table", "json", "mermaid", "dot", "html")
STATUS_COLOURS = {"passed": "#c8e6c9", "warned": "#ffe082", "failed": "#ef9a9a", None: "#e0e0e0"}

Node = tuple[int, "int | None"]  # (dataset id, field id or None for the dataset as a whole)


@dataclass
class Target:
    """The resolved start of an impact query."""

    dataset_id: int
    namespace: str
    name: str
    column: str | None = None
    field_id: int | None = None

    @property
    def label(self) -> str:
        """`name.column` or `name`."""
        return f"{self.name}.{self.column}" if self.column else self.name


@dataclass
class Hit:
    """One dataset or column reached, with the shortest path to it."""

    direction: str
    namespace: str
    dataset: str
    column: str | None
    distance: int
    coarse: bool
    path: list[dict[str, str]]
    jobs: list[str]
    transformation: str
    owners: list[str]
    contract: dict[str, Any] | None
    quality_status: str | None
    pii: bool = False
    node: str = ""  # a key for drawing; not part of the JSON

    @property
    def label(self) -> str:
        """`dataset.column` or `dataset`."""
        return f"{self.dataset}.{self.column}" if self.column else self.dataset


@dataclass
class ImpactResult:
    """Every hit of one query, plus the owners and contracts to involve."""

    target: Target
    direction: str
    depth: int | None
    hits: list[Hit] = field(default_factory=list)
    target_info: dict[str, Any] = field(default_factory=dict)
    #: (from node, to node, job name, coarse) in data-flow order, all edges between the target and its hits
    edges: list[tuple[str, str, str, bool]] = field(default_factory=list)

    @property
    def owners(self) -> list[str]:
        """Owners of the reached datasets and of the jobs on the paths, de-duplicated."""
        seen: dict[str, None] = {}
        for hit in self.hits:
            for owner in hit.owners:
                seen.setdefault(owner, None)
        return list(seen)

    @property
    def contracts(self) -> list[dict[str, Any]]:
        """The contracts attached to what was reached, one per dataset."""
        out: dict[str, dict[str, Any]] = {}
        for hit in self.hits:
            if hit.contract:
                out.setdefault(f"{hit.namespace}:{hit.dataset}", {"dataset": hit.dataset, **hit.contract})
        return list(out.values())

    @property
    def datasets(self) -> list[str]:
        """Names of the datasets reached (at any level), in order of first hit."""
        return list(dict.fromkeys(h.dataset for h in self.hits))

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "target": {"namespace": self.target.namespace, "dataset": self.target.name, "column": self.target.column},
            "direction": self.direction,
            "depth": self.depth,
            "hits": [{k: v for k, v in asdict(h).items() if k != "node"} for h in self.hits],
            "datasets": self.datasets,
            "owners": self.owners,
            "contracts": self.contracts,
        }


def resolve_target(graph: LineageGraph, text: str, namespace: str | None = None) -> Target:
    """Split DATASET[.COLUMN] against the known datasets: the longest matching dataset name wins.

    A name is a dataset's own name, a relative path of a local file, or an alias of a node: a contract's
    `dataset.name` (`lineage ingest` made it one) or a `symlinks` identifier (a catalog table's `db.table`).
    """
    parts = text.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        found = graph.find_named(name, namespace)
        if not found and "/" in name and os.path.exists(name):
            # Spark and our emitter name local files by absolute path; accept the relative one too.
            found = graph.find_named(os.path.abspath(name), namespace)
        if not found:
            continue
        if len(found) > 1:
            spaces = ", ".join(sorted(ns for _, ns, _ in found))
            raise InputDataError(f"dataset {name!r} exists in several namespaces ({spaces}); pass --namespace")
        dataset_id, ns, ds_name = found[0]
        if not graph.has_lineage(dataset_id):  # only a contract named it: its consumers are unknown, not none
            raise InputDataError(f"dataset {ds_name!r} is in the lineage store through its contract only: no event "
                                 "names it yet, so what reads it is unknown; ingest the events of a job that reads or "
                                 "writes it")
        column = ".".join(parts[cut:]) or None
        if column is None:
            return Target(dataset_id, ns, ds_name)
        field_id = graph.find_field(dataset_id, column)
        if field_id is None:
            known = [f["name"] for f in graph.fields_of(dataset_id)]
            shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "") if known else "none"
            raise InputDataError(f"dataset {ds_name!r} has no known column {column!r} (known: {shown})")
        return Target(dataset_id, ns, ds_name, column, field_id)
    where = f" in namespace {namespace!r}" if namespace else ""
    raise InputDataError(f"no dataset in the lineage store matches {text!r}{where}")


def column_fields(graph: LineageGraph, dataset_id: int, column: str) -> list[int]:
    """Known field ids an impact of a column starts from: the column, the structs it is nested in, its nested fields."""
    # Spark's column lineage names the top-level column: a job reading `address` reads `address.city`, and a
    # change to `address` reaches whoever reads a field nested in it.
    parts = column.split(".")
    names = [".".join(parts[:cut]) for cut in range(len(parts), 0, -1)]  # the column, then its parents
    ids = [graph.find_field(dataset_id, name) for name in names]
    return list(dict.fromkeys([i for i in ids if i is not None] + graph.nested_fields(dataset_id, column)))


class _Walker:
    """One breadth-first walk in one direction, with per-query caches of metadata."""

    def __init__(self, graph: LineageGraph, direction: str):
        self.graph = graph
        self.downstream = direction == "downstream"
        self._datasets: dict[int, dict[str, Any]] = {}
        self._jobs: dict[int, dict[str, Any]] = {}
        self._fields: dict[int, tuple[int, str, bool]] = {}
        self._dataset_jobs: dict[int, list[tuple[int, int, int]]] = {}
        self.edges: list[tuple[Node, Node, int, bool]] = []  # every edge seen between reached nodes

    def dataset(self, dataset_id: int) -> dict[str, Any]:
        if dataset_id not in self._datasets:
            self._datasets[dataset_id] = self.graph.dataset(dataset_id)
        return self._datasets[dataset_id]

    def job(self, job_id: int) -> dict[str, Any]:
        if job_id not in self._jobs:
            self._jobs[job_id] = self.graph.job(job_id, last_run=False)
        return self._jobs[job_id]

    def field(self, field_id: int) -> tuple[int, str, bool]:
        if field_id not in self._fields:
            self._fields[field_id] = self.graph.field(field_id)
        return self._fields[field_id]

    def _jobs_of(self, dataset_ids: list[int]) -> None:
        """Load (once per walk) the jobs reading (downstream) or writing (upstream) these datasets."""
        missing = [d for d in dataset_ids if d not in self._dataset_jobs]
        if missing:
            graph = self.graph
            found = graph.downstream_jobs_many(missing) if self.downstream else graph.upstream_jobs_many(missing)
            for dataset_id in missing:
                self._dataset_jobs[dataset_id] = found.get(dataset_id, [])

    def expand(self, frontier: list[tuple[Node, bool]]) -> list[tuple[Node, list[tuple[Node, int, str, bool]]]]:
        """Each frontier node with its (next node, job, transformation, coarse) one job hop away."""
        graph = self.graph
        field_ids = [node[1] for node, _ in frontier if node[1] is not None]
        column_datasets = [node[0] for node, _ in frontier if node[1] is not None]
        if self.downstream:
            edges = graph.field_out_many(field_ids) if field_ids else {}
            deps = graph.dataset_deps_out_many(field_ids) if field_ids else {}
        else:
            edges = graph.field_in_many(field_ids) if field_ids else {}
            deps = graph.dataset_deps_in_many(column_datasets) if field_ids else {}
        self._jobs_of([node[0] for node, _ in frontier])
        out = []
        for node, coarse in frontier:
            dataset_id, field_id = node
            steps: list[tuple[Node, int, str, bool]] = []
            if field_id is not None:
                fields = self._fields
                for other, other_ds, job, kind, sub, name, pii in edges.get(field_id, ()):
                    fields[other] = (other_ds, name, bool(pii))
                    steps.append(((other_ds, other), job, _kind(kind, sub), False))
                if self.downstream:
                    for other_ds, job, kind, sub in deps.get(field_id, ()):
                        steps.append(((other_ds, None), job, _kind(kind, sub), False))
                else:
                    for other, other_ds, job, kind, sub, name, pii in deps.get(dataset_id, ()):
                        fields[other] = (other_ds, name, bool(pii))
                        steps.append(((other_ds, other), job, _kind(kind, sub), False))
                for job, other_ds, has_column_lineage in self._dataset_jobs[dataset_id]:
                    if not has_column_lineage:  # this job's output cannot be followed by column: coarse
                        steps.append(((other_ds, None), job, "DATASET", True))
            else:
                for job, other_ds, _ in self._dataset_jobs[dataset_id]:
                    steps.append(((other_ds, None), job, "DATASET", coarse))
            out.append((node, steps))
        return out

    def walk(self, starts: list[Node], depth: int | None) -> Iterator[tuple[Node, int, bool, dict[Node, tuple]]]:
        """Yield (node, distance, coarse, parents) for each node reached from the start nodes, nearest first."""
        parents: dict[Node, tuple[Node, int, str]] = {}
        seen = set(starts)
        frontier: list[tuple[Node, bool]] = [(start, False) for start in starts]
        distance = 0
        while frontier and (depth is None or distance < depth):
            following: list[tuple[Node, bool]] = []
            for node, steps in self.expand(frontier):
                for nxt, job, kind, nxt_coarse in steps:
                    self.edges.append((node, nxt, job, nxt_coarse))
                    if nxt in seen:
                        continue
                    seen.add(nxt)
                    parents[nxt] = (node, job, kind)
                    following.append((nxt, nxt_coarse))
                    yield nxt, distance + 1, nxt_coarse, parents
            frontier = following
            distance += 1

    def label(self, node: Node) -> str:
        dataset_id, field_id = node
        name = self.dataset(dataset_id)["name"]
        return f"{name}.{self.field(field_id)[1]}" if field_id is not None else name

    def job_label(self, job_id: int) -> str:
        job = self.job(job_id)
        return f"{job['namespace']}:{job['name']}"


def _kind(kind: str, sub: str) -> str:
    return "/".join(p for p in (kind, sub) if p) or "UNKNOWN"


def _node_key(direction: str, node: Node) -> str:
    return f"{direction}:{node[0]}:{node[1] if node[1] is not None else '*'}"


def impact(graph: LineageGraph, target: Target, direction: str = "downstream", depth: int | None = None) -> ImpactResult:
    """Walk the graph from the target and describe every dataset or column reached."""
    if direction not in DIRECTIONS:
        raise InputDataError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    if depth is not None and depth < 0:
        raise InputDataError("--depth must be 0 or more")
    result = ImpactResult(target, direction, depth)
    starts: list[Node] = [(target.dataset_id, target.field_id)]
    if target.field_id is not None and target.column:  # the structs it is nested in, the fields nested in it
        starts += [(target.dataset_id, f) for f in column_fields(graph, target.dataset_id, target.column)
                   if f != target.field_id]
    info = graph.dataset(target.dataset_id)
    result.target_info = {**info, "pii": bool(target.field_id and graph.field(target.field_id)[2])}
    for way in (("downstream", "upstream") if direction == "both" else (direction,)):
        walker = _Walker(graph, way)
        for node, distance, coarse, parents in walker.walk(starts, depth):
            result.hits.append(_hit(walker, way, starts, node, distance, coarse, parents))
        seen_edges = set()
        for src, dst, job, coarse in walker.edges:
            a = "target" if src in starts else _node_key(way, src)
            b = "target" if dst in starts else _node_key(way, dst)
            edge = (a, b, walker.job(job)["name"], coarse) if way == "downstream" else (b, a, walker.job(job)["name"], coarse)
            if edge[:3] not in seen_edges:
                seen_edges.add(edge[:3])
                result.edges.append(edge)
    return result


def _hit(walker: _Walker, way: str, starts: list[Node], node: Node, distance: int, coarse: bool,
         parents: dict[Node, tuple]) -> Hit:
    chain: list[tuple[Node, int, str]] = []
    cursor = node
    while cursor not in starts:
        prev, job, kind = parents[cursor]
        chain.append((cursor, job, kind))
        cursor = prev
    chain.reverse()
    path = [{"node": walker.label(cursor)}]  # the start it came from: the target, or its struct or nested field
    jobs: list[str] = []
    for step, job, kind in chain:
        job_name = walker.job_label(job)
        jobs.append(job_name)
        path.append({"job": job_name, "transformation": kind})
        path.append({"node": walker.label(step)})
    info = walker.dataset(node[0])
    owners = list(dict.fromkeys(info["owners"] + [o for j in chain for o in walker.job(j[1])["owners"]]))
    return Hit(
        direction=way, namespace=info["namespace"], dataset=info["name"],
        column=walker.field(node[1])[1] if node[1] is not None else None, distance=distance, coarse=coarse,
        path=path, jobs=list(dict.fromkeys(jobs)), transformation=chain[-1][2], owners=owners,
        contract=info["contract"], quality_status=info["quality_status"],
        pii=walker.field(node[1])[2] if node[1] is not None else False,
        node=_node_key(way, node),
    )


# --------------------------------------------------------------------------- renderers


def render_table(result: ImpactResult) -> str:
    """A plain-text table, one row per hit, then owners and contracts."""
    head = f"impact of {result.target.namespace}:{result.target.label} ({result.direction}"
    head += f", depth <= {result.depth})" if result.depth is not None else ")"
    if not result.hits:
        return head + "\nno datasets reached\n"
    rows = [("DIR", "HOPS", "DATASET", "COLUMN", "QUALITY", "LEVEL", "OWNERS", "VIA JOBS")]
    for hit in result.hits:
        level = "dataset (coarse)" if hit.coarse else ("column" if hit.column else "dataset")
        rows.append((hit.direction, str(hit.distance), f"{hit.namespace}:{hit.dataset}",
                     (hit.column or "-") + (" [PII]" if hit.pii else ""), hit.quality_status or "unknown", level,
                     ", ".join(hit.owners) or "-", " > ".join(hit.jobs)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [head]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
    lines.append(f"owners to notify: {', '.join(result.owners) or 'none known'}")
    contracts = [f"{c['dataset']} ({c.get('name', '?')} {c.get('version', '?')})" for c in result.contracts]
    lines.append(f"contracts: {', '.join(contracts) or 'none'}")
    return "\n".join(lines) + "\n"


def render_json(result: ImpactResult) -> str:
    """The result as indented JSON."""
    return json.dumps(result.as_dict(), indent=2, sort_keys=False) + "\n"


def _graph_parts(result: ImpactResult) -> tuple[list[dict[str, Any]], list[tuple[str, str, str, bool]]]:
    """Nodes (target first) and edges (from, to, job name, coarse) of the impacted subgraph."""
    nodes = [{"id": "target", "label": result.target.label, "status": result.target_info.get("quality_status"),
              "pii": result.target_info.get("pii", False), "distance": 0, "target": True}]
    for hit in result.hits:
        signed = hit.distance if hit.direction == "downstream" else -hit.distance
        nodes.append({"id": hit.node, "label": hit.label, "status": hit.quality_status, "pii": hit.pii,
                      "distance": signed, "target": False, "coarse": hit.coarse})
    return nodes, result.edges


def render_mermaid(result: ImpactResult) -> str:
    """A Mermaid flowchart of the impacted subgraph."""
    nodes, edges = _graph_parts(result)
    ids = {n["id"]: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["flowchart LR"]
    for n in nodes:
        label = n["label"] + (" [PII]" if n["pii"] else "")
        lines.append(f'  {ids[n["id"]]}["{_mermaid_escape(label)}"]:::{n["status"] or "unknown"}')
    for src, dst, job, coarse in edges:
        arrow = "-.->" if coarse else "-->"
        lines.append(f'  {ids[src]} {arrow}|"{_mermaid_escape(job)}"| {ids[dst]}')
    for status, colour in STATUS_COLOURS.items():
        lines.append(f"  classDef {status or 'unknown'} fill:{colour}")
    return "\n".join(lines) + "\n"


def _mermaid_escape(text: str) -> str:
    return text.replace('"', "#quot;")


def render_dot(result: ImpactResult) -> str:
    """A Graphviz digraph of the impacted subgraph."""
    nodes, edges = _graph_parts(result)
    ids = {n["id"]: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["digraph impact {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled"];']
    for n in nodes:
        label = n["label"] + ("\\n[PII]" if n["pii"] else "")
        extra = ", penwidth=3" if n["target"] else ""
        lines.append(f'  {ids[n["id"]]} [label={_dot_quote(label)}, fillcolor="{STATUS_COLOURS.get(n["status"], STATUS_COLOURS[None])}"{extra}];')
    for src, dst, job, coarse in edges:
        style = ", style=dashed" if coarse else ""
        lines.append(f"  {ids[src]} -> {ids[dst]} [label={_dot_quote(job)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n") + '"'


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px sans-serif; margin: 16px; }}
svg text {{ font: 12px sans-serif; }}
.node rect {{ stroke: #555; stroke-width: 1; }}
.node.target rect {{ stroke-width: 3; }}
.node.pii rect {{ stroke: #6a1b9a; stroke-width: 2.5; stroke-dasharray: 5 3; }}
.pii-badge {{ fill: #6a1b9a; font-weight: bold; }}
.edge {{ stroke: #666; fill: none; marker-end: url(#arrow); }}
.edge.coarse {{ stroke-dasharray: 6 4; }}
.legend span {{ display: inline-block; padding: 2px 8px; margin-right: 6px; border: 1px solid #555; }}
</style></head>
<body data-expected-nodes="{count}">
<h1>{title}</h1>
<p class="legend">quality: {legend} <span style="border:2px dashed #6a1b9a">PII column</span> dashed edge = coarse (job without column lineage)</p>
<svg xmlns="http://www.w3.org/2000/svg" id="graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
<path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>
{edges}
{nodes}
</svg>
<p id="summary">{summary}</p>
<script>
// Count the nodes the browser actually laid out (a non-empty box), so a test can tell a drawn page from text.
(function () {{
  var drawn = 0;
  document.querySelectorAll('#graph g.node').forEach(function (g) {{
    var box = g.getBBox();
    if (box.width > 0 && box.height > 0) drawn += 1;
  }});
  document.body.setAttribute('data-rendered-nodes', String(drawn));
}})();
</script>
</body></html>
"""


def render_html(result: ImpactResult) -> str:
    """A self-contained page (inline SVG and CSS, no external resources) drawing the impacted subgraph."""
    nodes, edges = _graph_parts(result)
    box_w, box_h, gap_x, gap_y, margin = 240, 44, 150, 24, 20
    columns: dict[int, list[dict[str, Any]]] = {}
    for n in nodes:
        columns.setdefault(n["distance"], []).append(n)
    order = sorted(columns)
    where: dict[str, tuple[int, int]] = {}
    for ci, distance in enumerate(order):
        for ri, n in enumerate(columns[distance]):
            where[n["id"]] = (margin + ci * (box_w + gap_x), margin + ri * (box_h + gap_y))
    width = margin * 2 + len(order) * (box_w + gap_x) - gap_x
    height = margin * 2 + max(len(c) for c in columns.values()) * (box_h + gap_y) - gap_y
    node_svg = []
    for n in nodes:
        x, y = where[n["id"]]
        classes = "node" + (" target" if n["target"] else "") + (" pii" if n["pii"] else "")
        status = n["status"] or "unknown"
        fill = STATUS_COLOURS.get(n["status"], STATUS_COLOURS[None])
        label = _short_label(n["label"])
        badge = f'<text class="pii-badge" x="{x + box_w - 30}" y="{y + 16}">PII</text>' if n["pii"] else ""
        node_svg.append(
            f'<g class="{classes}" data-status="{html.escape(status)}"><title>{html.escape(n["label"])} ({status})</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="6" fill="{fill}"/>'
            f'<text x="{x + 8}" y="{y + 18}">{html.escape(label)}</text>'
            f'<text x="{x + 8}" y="{y + 35}" fill="#333">{status}</text>{badge}</g>')
    edge_svg = []
    for src, dst, job, coarse in edges:
        (x1, y1), (x2, y2) = where[src], where[dst]
        sx, sy, ex, ey = x1 + box_w, y1 + box_h / 2, x2, y2 + box_h / 2
        if x2 <= x1:  # only happens for odd layouts; draw from the left side
            sx, ex = x1, x2 + box_w
        mid = (sx + ex) / 2
        short = job if len(job) <= 22 else job[:21] + "\u2026"
        # the job name sits just before the arrowhead, so labels of a fan-out land on separate rows
        edge_svg.append(
            f'<g class="edge-group"><title>{html.escape(job)}</title>'
            f'<path class="edge{" coarse" if coarse else ""}" d="M{sx},{sy} C{mid},{sy} {mid},{ey} {ex},{ey}"/>'
            f'<text x="{ex - 4}" y="{ey - 5}" text-anchor="end" font-size="10" fill="#444">{html.escape(short)}</text></g>')
    legend = "".join(f'<span style="background:{c}">{s or "unknown"}</span>' for s, c in STATUS_COLOURS.items())
    title = f"Impact of {result.target.namespace}:{result.target.label} ({result.direction})"
    summary = (f"{len(result.hits)} hit(s); owners to notify: {', '.join(result.owners) or 'none known'}; "
               f"contracts: {', '.join(c['dataset'] for c in result.contracts) or 'none'}")
    return _PAGE.format(title=html.escape(title), count=len(nodes), legend=legend, width=width, height=height,
                        edges="\n".join(edge_svg), nodes="\n".join(node_svg), summary=html.escape(summary))


def _short_label(label: str, width: int = 34) -> str:
    """A path-like dataset keeps its last segment (and the column); anything longer keeps its tail."""
    if len(label) <= width:
        return label
    tail = label.rsplit("/", 1)[-1]
    return tail if len(tail) <= width else "\u2026" + tail[-(width - 1):]


RENDERERS: dict[str, Callable[[ImpactResult], str]] = {
    "table": render_table, "json": render_json, "mermaid": render_mermaid, "dot": render_dot, "html": render_html,
}


def render(result: ImpactResult, fmt: str) -> str:
    """Render a result in one of FORMATS."""
    try:
        return RENDERERS[fmt](result)
    except KeyError:
        raise InputDataError(f"format {fmt!r} is not one of {', '.join(FORMATS)}") from None
