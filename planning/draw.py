"""Landmark graphs drawn with matplotlib in a layered layout (no system graphviz needed).

Layers follow the longest chain of sound orderings into each landmark, so everything
a landmark needs sits above it. Edge style shows the ordering kind.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from asg.planning.landmark_graph import LandmarkGraph

EDGE_STYLE = {  # kind -> (line style, colour)
    "greedy-necessary": ("solid", "#1f4e79"),
    "natural": ("dashed", "#555555"),
    "reasonable": ("dotted", "#b03a2e"),
}


def layered_positions(graph: nx.DiGraph) -> dict[int, tuple[float, float]]:
    """x within a layer, y = -layer; layers by longest path from the sources."""
    layer: dict[int, int] = {}
    for node in nx.topological_sort(graph):
        preds = list(graph.predecessors(node))
        layer[node] = 1 + max((layer[p] for p in preds), default=-1)
    rows: dict[int, list[int]] = {}
    for node in sorted(layer):
        rows.setdefault(layer[node], []).append(node)
    positions = {}
    for depth, nodes in rows.items():
        # order each row by the mean x of its parents to reduce crossings
        if depth:
            nodes.sort(key=lambda n: sum(positions[p][0] for p in graph.predecessors(n))
                       / max(1, graph.in_degree(n)))
        width = len(nodes)
        for i, node in enumerate(nodes):
            positions[node] = (i - (width - 1) / 2, -float(depth))
    return positions


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
        ax.text(x, y, "\n".join(lm.atom_strings()), ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round,pad=0.4", "fc": face,
                      "ec": "#1e8449" if lm.goal else "#333333", "lw": 1.5 if lm.goal else 1.0})
    handles = [plt.Line2D([], [], linestyle=s, color=c, label=k) for k, (s, c) in EDGE_STYLE.items()]
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    ax.set_title(f"{graph.task.domain_name} / {graph.task.name}: {len(graph.landmarks)} landmarks "
                 f"(h^m, m={graph.m}); green = goal, grey = initially true", fontsize=10)
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    ax.axis("off")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format=path.suffix.lstrip(".").lower() or "png", dpi=120)
    plt.close(fig)
    tmp.replace(path)
    return path
