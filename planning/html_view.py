"""An explorable landmark graph: one self-contained HTML page, for graphs too big for a PNG.

The page inlines cytoscape.js (``assets/cytoscape.min.js``, MIT, licence in
``assets/cytoscape.LICENSE``), the page script (``assets/landmark_view.html``) and the data as
JSON, so it opens offline from a file. Positions are computed here, by the layered layout that
the PNGs use (:func:`asg.planning.draw.layered_layout`), and passed as a preset layout: the page
runs no layout of its own, so it is quick to open and the same graph always looks the same.

Page data (``page_data``): ``landmarks`` and ``orderings`` exactly as in
:meth:`LandmarkGraph.to_json`, each landmark with ``x``, ``y`` (pixels), ``w``, ``h`` (its box)
and ``first`` / ``possible`` (indices into ``operators``); ``subgoals`` (landmark ids in order).
"""
from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable
from importlib import resources

from asg.planning.draw import layered_layout
from asg.planning.landmark_graph import Landmark, LandmarkGraph
from asg.planning.task import Atom, Operator, Task

FONT_PX = 10  # monospace font size of node labels; the page style uses the same
CHAR_PX = 0.62 * FONT_PX  # width of one monospace character
LINE_PX = 1.3 * FONT_PX
ROW_PX = 80  # vertical distance between rows of the layout
GAP_PX = 24  # horizontal gap between boxes
ASPECT = 1.6  # wanted width / height of the whole layout; wide layers wrap to reach it


def to_html(graph: LandmarkGraph, *, title: str | None = None,
            subgoals: Iterable[Landmark | int] | None = None, task: Task | None = None) -> str:
    """One self-contained HTML page to explore ``graph`` (pan, zoom, search, filter, details)."""
    data = page_data(graph, subgoals=subgoals, task=task)
    title = title if title is not None else (
        f"{graph.task.domain_name} / {graph.task.name}: landmark graph ({graph.describe()})")
    data["title"] = title
    template = _asset("landmark_view.html").replace("__TITLE__", html.escape(title))
    library = _asset("cytoscape.min.js")
    if "</script" in library.lower():
        raise ValueError("the vendored cytoscape.min.js cannot be inlined: it holds '</script'")
    # JSON inside <script type="application/json">: escape what could end the element early.
    payload = (json.dumps(data, separators=(",", ":"), ensure_ascii=False)
               .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    head, rest = template.split("/*__CYTOSCAPE__*/")
    middle, tail = rest.split("/*__DATA__*/")
    return head + library + middle + payload + tail


def page_data(graph: LandmarkGraph, *, subgoals: Iterable[Landmark | int] | None = None,
              task: Task | None = None) -> dict:
    """The JSON the page shows: the graph's export plus positions, achievers and subgoals."""
    exported = graph.to_json()
    task = task if task is not None else graph.task
    operators = sorted(task.operators, key=lambda op: op.name)
    index = {op.name: i for i, op in enumerate(operators)}  # the page lists operators by index
    found = achievers(graph.landmarks, task)
    chosen = [s.id if isinstance(s, Landmark) else int(s)
              for s in (graph.subgoals() if subgoals is None else subgoals)]
    unknown = set(chosen) - {lm.id for lm in graph.landmarks}
    if unknown:
        raise ValueError(f"subgoals name landmarks the graph does not hold: {sorted(unknown)}")
    rank = {lm_id: k for k, lm_id in enumerate(chosen, start=1)}
    boxes = {lm.id: _box(lm, f"#{rank[lm.id]} " if lm.id in rank else "") for lm in graph.landmarks}
    positions = _positions(graph, boxes)
    for entry in exported["landmarks"]:
        lm_id = entry["id"]
        first, possible = found[lm_id]
        x, y = positions[lm_id]
        entry.update(x=round(x, 1), y=round(y, 1), w=boxes[lm_id][0], h=boxes[lm_id][1],
                     first=sorted(index[op.name] for op in first),
                     possible=sorted(index[op.name] for op in possible))
    return {
        "domain": exported["domain"], "problem": exported["problem"], "method": exported["method"],
        "m": exported["m"], "landmarks": exported["landmarks"], "orderings": exported["orderings"],
        "operators": [op.name for op in operators],
        "subgoals": chosen,
    }


def achievers(landmarks: Iterable[Landmark], task: Task) -> dict[int, tuple[list[Operator], list[Operator]]]:
    """Landmark id -> (first achievers, possible achievers), computed from ``task``'s operators.

    A possible achiever adds an atom of the landmark and deletes none of the others (for a
    fact landmark: it adds the atom). A first achiever is a possible achiever whose
    preconditions are reachable in the delete relaxation without using any possible achiever,
    i.e. one that can make the landmark true for the first time (Fast Downward's definition);
    a landmark true initially has none.
    """
    ops = sorted(task.operators, key=lambda op: op.name)
    explore = _RelaxedExploration(task, ops)
    adders: dict[Atom, list[int]] = {}
    for i, op in enumerate(ops):
        for atom in op.add:
            adders.setdefault(atom, []).append(i)
    out = {}
    for lm in landmarks:
        possible = sorted({i for atom in lm.atoms for i in adders.get(atom, ())
                           if not ((ops[i].delete - ops[i].add) & lm.atoms)})
        first = [] if lm.initially_true else explore.applicable_without(possible)
        out[lm.id] = ([ops[i] for i in first], [ops[i] for i in possible])
    return out


class _RelaxedExploration:
    """Delete-relaxed reachability over integer-indexed atoms and operators (fast repeats)."""

    def __init__(self, task: Task, ops: list[Operator]) -> None:
        atoms = sorted({a for op in ops for a in op.pre | op.add} | set(task.init))
        number = {a: i for i, a in enumerate(atoms)}
        self.pre = [[number[a] for a in op.pre] for op in ops]
        self.add = [[number[a] for a in op.add] for op in ops]
        self.init = [number[a] for a in task.init]
        self.waiting: list[list[int]] = [[] for _ in atoms]  # atom -> operators that need it
        for i, pre in enumerate(self.pre):
            for a in pre:
                self.waiting[a].append(i)
        self.n_atoms = len(atoms)

    def applicable_without(self, banned: list[int]) -> list[int]:
        """Those of ``banned`` whose preconditions are reachable without any of ``banned``."""
        skip = set(banned)
        missing = [len(pre) for pre in self.pre]
        reached = [False] * self.n_atoms
        frontier = list(self.init)
        frontier += [a for i, n in enumerate(missing) if n == 0 and i not in skip for a in self.add[i]]
        while frontier:
            atom = frontier.pop()
            if reached[atom]:
                continue
            reached[atom] = True
            for i in self.waiting[atom]:
                missing[i] -= 1
                if missing[i] == 0 and i not in skip:
                    frontier += self.add[i]
        return [i for i in banned if all(reached[a] for a in self.pre[i])]


def _box(lm: Landmark, prefix: str = "") -> tuple[float, float]:
    """Width and height in pixels of a landmark's box: one atom per line, monospace; a
    subgoal's first line starts with its rank (``#3 ``)."""
    lines = lm.label_lines()
    lines[0] = prefix + lines[0]
    return (round(max(len(s) for s in lines) * CHAR_PX + 12, 1),
            round(len(lines) * LINE_PX + 10, 1))


def _positions(graph: LandmarkGraph, boxes: dict[int, tuple[float, float]]) -> dict[int, tuple[float, float]]:
    """Pixel positions: layers by sound orderings, wide layers wrapped towards ``ASPECT``."""
    widths = {i: w for i, (w, _) in boxes.items()}
    total = sum(widths.values()) + GAP_PX * len(widths)
    rows = max(1.0, math.sqrt(total / (ASPECT * ROW_PX)))  # width/rows == ASPECT * rows * ROW_PX
    max_row = max(8, math.ceil(len(widths) / rows))
    edges = [(o.source, o.target) for o in graph.orderings]
    layout = layered_layout(sorted(widths), edges, widths=widths, gap=GAP_PX, max_row=max_row)
    return {i: (x, -y * ROW_PX) for i, (x, y) in layout.items()}


def _asset(name: str) -> str:
    return resources.files("asg.planning").joinpath("assets").joinpath(name).read_text(encoding="utf-8")
