"""Landmarks on Fast Downward's benchmark collection (costs, ADL, conditional effects, derived
predicates) equal FD's own factories: a fast subset by default, the whole corpus under ``slow``,
and the committed report of ``benchmarks/landmarks.py`` meets the bar the README quotes.

FD's ``lm_hm`` refuses axioms; asg's hm does the same, so hm is compared on tasks without them.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import SHARED

from asg.planning import compute_landmarks, load_task
from asg.planning.errors import PlannerError
from asg.planning.landmarks import FACTORIES
from asg.planning.peer import asg_view, compare, fd_landmarks, pddl_texts

SUITE = SHARED / "benchmarks" / "ipc_suite"
REPORT = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "landmarks_ipc_suite_all.json"
# one small task each: action costs from function values, conditional effects, ADL with derived
# predicates, derived predicates alone, ADL with costs, a negated universal compiled to an axiom
SUBSET = ["elevators-opt08-strips/p01.pddl", "miconic-simpleadl/s1-0.pddl", "miconic-fulladl/f1-0.pddl",
          "psr-small/p01-s2-n1-l2-f50.pddl", "openstacks-opt08-adl/p01.pddl", "optical-telegraphs/p01-opt2.pddl"]


def suite_rows() -> list[dict]:
    manifest = SUITE / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with open(manifest) as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def agree(row: dict, factory: str) -> bool | None:
    """Identical landmarks and orderings, or None where FD's factory does not run the task."""
    domain, problem = SUITE / row["domain_file"], SUITE / row["problem_file"]
    task = load_task(domain, problem)
    if factory == "hm" and task.axioms:
        return None
    try:
        peer = fd_landmarks(*pddl_texts(domain, problem), factory=factory, timeout=60)
    except PlannerError:
        return None
    result = compare(asg_view(compute_landmarks(task, factory=factory)), peer)
    return result.landmarks_equal and result.orderings_equal


need_suite = pytest.mark.skipif(not suite_rows(), reason=f"{SUITE} absent (the shared IPC suite)")


@need_suite
@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("name", SUBSET)
def test_subset_beyond_strips_agrees_with_fd(name, factory):
    row = next(r for r in suite_rows() if r["problem_file"] == name)
    result = agree(row, factory)
    if result is None and factory == "hm":
        assert load_task(SUITE / row["domain_file"], SUITE / row["problem_file"]).axioms
        pytest.skip("FD's lm_hm refuses axioms, and so does asg's hm")
    assert result is True


@pytest.mark.slow
@need_suite
@pytest.mark.parametrize("factory", FACTORIES)
def test_whole_suite_agrees_with_fd(factory):
    results = [agree(row, factory) for row in suite_rows()
               if row["problem_file"] != "organic-synthesis-sat18-strips/p03.pddl"]  # FD's translator too: >23 GB
    compared = [r for r in results if r is not None]
    assert sum(compared) >= (0.99 if factory == "hm" else 0.95) * len(compared)


def test_committed_report_meets_the_bar():
    """The whole-corpus report the README links: every factory at its bar where FD's ran, asg
    reading all but the task FD's translator cannot ground either, and at most FD's process time."""
    data = json.loads(REPORT.read_text())
    summary = data["summary"]
    assert summary["tasks"] == summary["planned"] == 330
    unread = [r["task"] for r in data["rows"] if not r["asg_read"]]
    assert unread == ["organic-synthesis-sat18-strips/p03.pddl"], unread
    for factory in FACTORIES:
        entry = summary[factory]
        assert entry["both_equal"] >= (0.99 if factory == "hm" else 0.95) * entry["compared"], factory
        assert entry["median_process_ratio"] <= 1.0, factory
