"""The explorable HTML landmark graph: page content without a browser, and what headless
Chromium renders (node and edge counts equal the graph's JSON export) where it is installed."""
from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import ipc_paths, ipc_rows  # need_ipc, a fixture, comes from conftest too

from asg import pddl_models
from asg.planning import compute_landmarks, load_task
from asg.planning.html_view import achievers, page_data, to_html
from asg.planning.landmark_graph import Landmark
from asg.planning.task import Atom, Operator, Task

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
LARGE = "depot/p05.pddl"  # 772 landmarks, 7,888 orderings at m=2: the scale a PNG cannot show


@pytest.fixture(scope="module")
def household():
    return compute_landmarks(load_task(pddl_models.path("household_v1")), m=2)


def embedded(page: str) -> dict:
    found = re.search(r'<script id="asg-data" type="application/json">(.*?)</script>', page, re.DOTALL)
    return json.loads(found.group(1))


def strip_view(landmarks: list[dict]) -> list[dict]:
    return [{k: lm[k] for k in ("id", "atoms", "kind", "initially_true", "goal")} for lm in landmarks]


# -- the page, no browser --------------------------------------------------------------------
def test_page_is_self_contained_and_holds_the_export(household):
    page = to_html(household)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the page must work offline"
    assert "<link" not in page and "<script src" not in page
    assert "Copyright (c) 2016-2026, The Cytoscape Consortium" in page  # the library's MIT notice
    data = embedded(page)
    export = household.to_json()
    assert strip_view(data["landmarks"]) == export["landmarks"]
    assert data["orderings"] == export["orderings"]
    assert data["subgoals"] == [lm.id for lm in household.subgoals()]
    assert to_html(household) == page  # deterministic


def test_layout_puts_what_a_landmark_needs_above_it(household):
    data = page_data(household)
    y = {lm["id"]: lm["y"] for lm in data["landmarks"]}
    x = {lm["id"]: lm["x"] for lm in data["landmarks"]}
    for o in data["orderings"]:
        if o["kind"] != "reasonable":
            assert y[o["from"]] < y[o["to"]], o  # the page's y grows downwards
    boxes = [(y[lm["id"]], x[lm["id"]] - lm["w"] / 2, x[lm["id"]] + lm["w"] / 2) for lm in data["landmarks"]]
    for row in {b[0] for b in boxes}:
        spans = sorted((lo, hi) for r, lo, hi in boxes if r == row)
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans)), "boxes in a row overlap"


def test_achievers_come_from_the_operators(household):
    found = achievers(household.landmarks, household.task)
    names = {str(lm): ([op.name for op in first], [op.name for op in possible])
             for lm in household.landmarks for first, possible in [found[lm.id]]}
    keys = ["(pickup_key green)", "(pickup_key red)", "(pickup_key yellow)"]
    assert names["(has-key)"] == (keys, keys)
    assert names["(at-final-room)"] == (["(pass_through_door)"], ["(pass_through_door)"])
    assert names["{(charged), (door-open)}"][1] == ["(charge_door)", "(open_door)"]
    data = page_data(household)
    entry = next(lm for lm in data["landmarks"] if lm["atoms"] == ["(has-key)"])
    assert [data["operators"][i] for i in entry["possible"]] == keys


def test_first_achievers_need_not_the_landmark_itself():
    p, q, r = Atom("p"), Atom("q"), Atom("r")
    make = Operator("(make-p)", frozenset({r}), frozenset({p}), frozenset())
    again = Operator("(again-p)", frozenset({q}), frozenset({p}), frozenset())  # q needs p first
    get_q = Operator("(get-q)", frozenset({p}), frozenset({q}), frozenset())
    get_r = Operator("(get-r)", frozenset(), frozenset({r}), frozenset())
    task = Task("t", "d", (p, q, r), (again, get_q, get_r, make), frozenset(), frozenset({q}))
    lm = Landmark(0, frozenset({p}), "fact", initially_true=False, goal=False)
    first, possible = achievers([lm], task)[0]
    assert [op.name for op in possible] == ["(again-p)", "(make-p)"]
    assert [op.name for op in first] == ["(make-p)"]
    pair = Landmark(1, frozenset({p, q}), "conjunctive", initially_true=False, goal=False)
    spoil = Operator("(spoil)", frozenset(), frozenset({p}), frozenset({q}))
    task2 = Task("t", "d", (p, q, r), (again, get_q, get_r, make, spoil), frozenset(), frozenset({q}))
    assert "(spoil)" not in [op.name for op in achievers([pair], task2)[1][1]]  # it deletes q


def test_title_is_escaped_and_subgoals_are_chosen(household):
    page = to_html(household, title="<b>risky & bold</b>", subgoals=[])
    assert "&lt;b&gt;risky &amp; bold&lt;/b&gt;" in page and "<b>risky" not in page
    assert embedded(page)["subgoals"] == []
    some = household.subgoals()[:2]
    assert embedded(to_html(household, subgoals=some))["subgoals"] == [lm.id for lm in some]
    with pytest.raises(ValueError, match="does not hold"):
        page_data(household, subgoals=[10_000])


def test_data_cannot_end_the_script_element(household):
    page = to_html(household, title="</script><script>alert(1)</script>")
    script = page.split('<script id="asg-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(script)["title"] == "</script><script>alert(1)</script>"


# -- in a real browser -----------------------------------------------------------------------
def browser() -> str:
    for name in BROWSERS:
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless Chromium on PATH (Debian: apt-get install -y chromium); "
                "the page content is still checked by the tests above")


class _Status(HTMLParser):
    """The attributes of ``<div id="asg-status">``, where the page's script writes its counts."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id") == "asg-status":
            self.attrs = {k: v or "" for k, v in attrs.items()}


def render(page: str, tmp_path: Path, fragment: str = "") -> tuple[dict[str, str], float]:
    """Open ``page`` in headless Chromium; the status attributes once it has drawn, and wall seconds."""
    path = tmp_path / "graph.html"
    path.write_text(page, encoding="utf-8")
    command = [browser(), "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000",
               "--dump-dom", path.as_uri() + fragment]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    seconds = time.perf_counter() - start
    status = _Status()
    status.feed(done.stdout)
    assert status.attrs, f"no status element in the dumped DOM; chromium said: {done.stderr[-2000:]}"
    return status.attrs, seconds


def check_rendered(graph, tmp_path: Path) -> dict[str, str]:
    attrs, seconds = render(to_html(graph), tmp_path)
    export = graph.to_json()
    assert attrs["data-ready"] == "1", attrs  # the first frame was drawn
    assert int(attrs["data-nodes"]) == len(export["landmarks"])
    assert int(attrs["data-edges"]) == len(export["orderings"])
    by_kind = Counter(o["kind"] for o in export["orderings"])
    assert json.loads(attrs["data-edges-by-kind"]) == {k: by_kind[k] for k in
                                                       ("greedy-necessary", "natural", "reasonable")}
    print(f"{export['problem']}: {len(export['landmarks'])} landmarks, {len(export['orderings'])} orderings; "
          f"first frame {float(attrs['data-render-ms']) / 1000:.1f} s after navigation; chromium {seconds:.1f} s")
    return attrs


def test_browser_renders_household(household, tmp_path):
    check_rendered(household, tmp_path)
    attrs, _ = render(to_html(household), tmp_path, "#q=has-key")
    expected = sum("has-key" in " ".join(lm.atom_strings()) for lm in household.landmarks)
    assert int(attrs["data-matches"]) == expected


def test_browser_renders_the_largest_blocks_task(need_ipc, tmp_path):
    rows = [r for r in ipc_rows() if r["domain"] == "blocks"]
    graphs = [compute_landmarks(load_task(*ipc_paths(r)), m=2) for r in rows]
    check_rendered(max(graphs, key=lambda g: len(g.landmarks)), tmp_path)


def test_browser_renders_a_graph_of_hundreds_of_landmarks(need_ipc, tmp_path):
    row = next(r for r in ipc_rows() if r["problem_file"] == LARGE)
    graph = compute_landmarks(load_task(*ipc_paths(row)), m=2)
    assert len(graph.landmarks) > 500 and len(graph.orderings) > 5000
    attrs = check_rendered(graph, tmp_path)
    assert float(attrs["data-render-ms"]) < 30_000  # generous: 2 shared CPUs, software rendering
