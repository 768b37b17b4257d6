"""Landmark graphs drawn with matplotlib in a layered layout (no system graphviz needed).

Layers follow the longest chain of sound orderings into each landmark, so everything
a landmark needs sits above it. Edge style shows the ordering kind. :func:`layered_layout`
is the pure layout, shared with the HTML view (``html_view``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import networkx as nx

    from asg.planning.landmark_graph import LandmarkGraph

# The matplotlib line styles used here (matplotlib's stubs accept only its named styles).
LineStyle = Literal["solid", "dashed", "dotted"]

EDGE_STYLE: dict[str, tuple[LineStyle, str]] = {  # kind -> (line style, colour)
    "greedy-necessary": ("solid", "#1f4e79"),
    "natural": ("dashed", "#555555"),
    "reasonable": ("dotted", "#b03a2e"),
}


def layered_positions(graph: nx.DiGraph) -> dict[int, tuple[float, float]]:
    """x within a layer, y = -layer; layers by longest path from the sources."""
    return layered_layout(graph.nodes, graph.edges)


def layered_layout(nodes: Iterable[int], edges: Iterable[tuple[int, int]], *,
                   widths: Mapping[int, float] | None = None, gap: float = 1.0,
                   max_row: int | None = None, wrap_step: float = 0.6) -> dict[int, tuple[float, float]]:
    """Positions of a DAG's nodes: (x, -height of its row), pure Python and deterministic.

    A node's layer is the longest chain of edges into it, except that a source sits just
    above its first successor (initially true landmarks next to what needs them). Rows are
    ordered by the mean position of neighbours (a few barycentre sweeps, fewer crossings);
    a layer of more than ``max_row`` nodes wraps onto several rows, ``wrap_step`` apart (layers
    are 1 apart). Within a row, nodes of ``widths`` (default 0) are packed ``gap`` apart and
    centred on x = 0.
    """
    edges = list(edges)
    layer = _layers(nodes, edges)
    preds: dict[int, list[int]] = {n: [] for n in layer}
    succs: dict[int, list[int]] = {n: [] for n in layer}
    for u, v in edges:
        preds[v].append(u)
        succs[u].append(v)
    by_layer: dict[int, list[int]] = {}
    for node in sorted(layer):
        by_layer.setdefault(layer[node], []).append(node)
    rows = [by_layer[d] for d in sorted(by_layer)]
    rank = {n: (i + 0.5) / len(row) for row in rows for i, n in enumerate(row)}
    for sweep in range(4):  # down by parents, up by children, twice
        order = rows if sweep % 2 == 0 else rows[::-1]
        for row in order:
            near = preds if sweep % 2 == 0 else succs
            row.sort(key=lambda n: _mean([rank[p] for p in near[n]], rank[n]))
            for i, node in enumerate(row):
                rank[node] = (i + 0.5) / len(row)  # rows of any length compare
    size = widths or {}
    positions: dict[int, tuple[float, float]] = {}
    y = 0.0
    for row in rows:
        pieces = -(-len(row) // max_row) if max_row else 1
        for k in range(pieces):  # every k-th node: each wrapped row spans the layer's order
            if k:
                y -= wrap_step
            chunk = row[k::pieces]
            total = sum(size.get(n, 0.0) for n in chunk) + gap * (len(chunk) - 1)
            x = -total / 2
            for node in chunk:
                w = size.get(node, 0.0)
                positions[node] = (x + w / 2, y)
                x += w + gap
        y -= 1.0
    return positions


def _layers(nodes: Iterable[int], edges: Iterable[tuple[int, int]]) -> dict[int, int]:
    """Longest-path layers (Kahn's order, smallest id first); sources moved down to their successors."""
    succs: dict[int, list[int]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(succs, 0)
    for u, v in edges:
        succs[u].append(v)
        indegree[v] += 1
    sources = [n for n in sorted(succs) if indegree[n] == 0]
    layer = dict.fromkeys(sources, 0)
    queue = list(sources)
    for node in queue:
        for succ in succs[node]:
            layer[succ] = max(layer.get(succ, 0), layer[node] + 1)
            indegree[succ] -= 1
            if indegree[succ] == 0:
                queue.append(succ)
    if len(layer) != len(succs):
        raise ValueError("layered_layout needs an acyclic graph")
    for node in sources:
        if succs[node]:
            layer[node] = min(layer[s] for s in succs[node]) - 1
    return layer


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default


def draw(graph: LandmarkGraph, path: str | Path, reduce: bool = True) -> Path:
    """Write the graph as PNG or SVG (by the suffix of ``path``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    path = Path(path)
    shown = graph.transitive_reduction() if reduce else graph.graph
    positions = layered_positions(shown)
    xs = [x for x, _ in positions.values()] or [0]
    ys = [y for _, y in positions.values()] or [0]
    width = max(6.0, 2.6 * (max(xs) - min(xs) + 1))
    height = max(3.0, 1.3 * (max(ys) - min(ys) + 1) + 1)
    fig, ax = plt.subplots(figsize=(width, height))
    edges = [(u, v, shown.edges[u, v]["kind"]) for u, v in shown.edges]
    edges += [(o.source, o.target, o.kind) for o in graph.reasonable]
    for u, v, kind in edges:
        style, colour = EDGE_STYLE[kind]
        ax.add_patch(FancyArrowPatch(positions[u], positions[v], arrowstyle="-|>", mutation_scale=14,
                                     linestyle=style, color=colour, shrinkA=18, shrinkB=18,
                                     connectionstyle="arc3,rad=0.08"))
    for lm in graph.landmarks:
        x, y = positions[lm.id]
        face = "#d5f5e3" if lm.goal else ("#eeeeee" if lm.initially_true else "#ffffff")
        ax.text(x, y, "\n".join(lm.label_lines()), ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.4", "fc": face,
                      "ec": "#1e8449" if lm.goal else "#333333", "lw": 1.5 if lm.goal else 1.0})
    handles = [plt.Line2D([], [], linestyle=s, color=c, label=k) for k, (s, c) in EDGE_STYLE.items()]
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    ax.set_title(f"{graph.task.domain_name} / {graph.task.name}: {len(graph.landmarks)} landmarks "
                 f"({graph.describe()}); green = goal, grey = initially true", fontsize=10)
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    ax.axis("off")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format=path.suffix.lstrip(".").lower() or "png", dpi=120)
    plt.close(fig)
    tmp.replace(path)
    return path
