"""The Fetch program library for people: a text table, the family call graph, a drawing of it.

``asg programs`` prints :func:`library_text` (or :func:`library_json`) and draws
:func:`draw_hierarchy`; matplotlib is imported only when drawing (``asg.planning`` imports no
plotting library at module level).
"""
from __future__ import annotations

import io
from collections.abc import Iterable

from asg.planning.programs import ProgramLibrary


def library_text(library: ProgramLibrary) -> str:
    """The library as text: one block per program, then the family call hierarchy."""
    lines = [f"{len(library.atomic)} atomic and {len(library.non_atomic)} non-atomic programs "
             f"({library.path})", ""]
    for p in library:
        lines.append(f"{p.name}  level {p.level}  arguments ({' '.join(p.arguments)})")
        if p.description:
            lines.append(f"  {p.description}")
        if p.calls:
            lines.append(f"  calls: {len(p.calls)} programs ({', '.join(_families(library, p.calls))})")
        lines.append(f"  pre:  {p.pre}")
        lines.append(f"  post: {p.post}")
        if not p.atomic:
            subgoals = " ".join(map(str, library.subgoals(p.name))) or "none (no single atom is forced)"
            lines.append(f"  landmarks (from the model's :init): {subgoals}")
    lines += ["", "call hierarchy (families, highest level first):"]
    for family, level, callees in family_graph(library):
        lines.append(f"  [{level}] {family}" + (f" -> {', '.join(callees)}" if callees else ""))
    return "\n".join(lines)


def library_json(library: ProgramLibrary) -> dict:
    """``library.to_json()`` with each program's landmark subgoals (None for an atomic program)."""
    data = library.to_json()
    for entry in data["programs"]:
        entry["subgoals"] = None if entry["level"] == 0 else [str(a) for a in library.subgoals(entry["name"])]
    return data


def _families(library: ProgramLibrary, names: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for name in names:
        family = library.get(name).family
        if family not in seen:
            seen.append(family)
    return seen


def family_graph(library: ProgramLibrary) -> list[tuple[str, int, list[str]]]:
    """(family, level, called families) for every family, highest level first."""
    out: dict[str, tuple[int, list[str]]] = {}
    for p in library:
        out.setdefault(p.family, (p.level, _families(library, p.calls)))
    return sorted(((f, lv, calls) for f, (lv, calls) in out.items()), key=lambda t: -t[1])


def draw_hierarchy(library: ProgramLibrary, fmt: str) -> bytes:
    """The family call graph drawn with matplotlib, one row per level, as ``png`` or ``svg`` bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = family_graph(library)
    counts = {f: sum(1 for p in library if p.family == f) for f, _, _ in graph}
    rows: dict[int, list[str]] = {}
    for family, level, _ in graph:
        rows.setdefault(level, []).append(family)
    pos = {f: ((i + 1) / (len(fs) + 1), level) for level, fs in rows.items() for i, f in enumerate(fs)}
    fig, ax = plt.subplots(figsize=(10, 1.8 * (len(rows) + 1)))
    for family, _, callees in graph:
        for callee in callees:
            ax.annotate("", xy=pos[callee], xytext=pos[family],
                        arrowprops={"arrowstyle": "->", "color": "0.5", "shrinkA": 14, "shrinkB": 14})
    for family, (x, y) in pos.items():
        ax.text(x, y, f"{family}\n{counts[family]} program{'s' * (counts[family] > 1)}", ha="center",
                va="center", bbox={"boxstyle": "round", "fc": "#cfe8cf" if y == 0 else "#cfdff5"})
    ax.set_ylim(-0.6, max(rows) + 0.6)
    ax.set_yticks(sorted(rows), [f"level {lv}" for lv in sorted(rows)])
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_title("AlphaNPI-X program hierarchy (arrows: may call)")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()
