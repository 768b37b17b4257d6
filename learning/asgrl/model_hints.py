"""Model hints from training: what a run's skills saw, as ``model_hints.json`` (issue 39).

The trainer :func:`record` s every training episode's skill runs (``EpisodeStats.segments``) into
plain counts kept in its checkpointed state: per landmark, per landmark state a skill started
from (its labeler atoms), the runs and the states its successful runs ended in. At the end of a
run :func:`hints_report` turns them into ranked PDDL edits (``asg.planning.segment_hints``, which
reads them; ``asg.planning.hints`` prints them) and the run folder keeps them in
``model_hints.json`` (:data:`SCHEMA`, :data:`VERSION`), which ``asg train`` and ``asg eval RUN
--hints`` print.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from asg.learning.asgrl.episode import EpisodeStats
from asg.learning.asgrl.subgoals import SubgoalSet
from asg.learning.errors import CheckpointError
from asg.planning.hints import HintReport
from asg.planning.segment_hints import LandmarkRuns, SegmentHintConfig, suggest_from_segments
from asg.planning.task import Atom, Task

SCHEMA, VERSION = "asg-model-hints", 1
DEFAULT_DEAD_END_RUNS = 20  # where the learner marks no dead ends itself (its dead_end_after is 0)
_ATOM = re.compile(r"\([^()]*\)")

Evidence = dict[str, dict[str, list[Any]]]
"""Landmark -> start state's key -> [runs, {end state's key: successful runs}]; keys: the true
atoms, sorted, space-separated (plain data for the checkpoint)."""


def _key(labels: Iterable[Any]) -> str:
    return " ".join(sorted(map(str, labels)))


def _labels(key: str) -> frozenset[Atom]:
    return frozenset(Atom.parse(a) for a in _ATOM.findall(key))


def record(evidence: Evidence, stats: EpisodeStats) -> None:
    """Add one episode's skill runs to ``evidence``."""
    for name, start, end in stats.segments:
        entry = evidence.setdefault(name, {}).setdefault(_key(start), [0, {}])
        entry[0] += 1
        if end is not None:
            ends = entry[1]
            ends[_key(end)] = ends.get(_key(end), 0) + 1


def _always_before(subgoals: SubgoalSet) -> dict[str, set[Atom]]:
    """Per subgoal, the atoms of the subgoals before it in every linearization."""
    out: dict[str, set[Atom]] = {}
    for i, sg in enumerate(subgoals.subgoals):
        firsts = [set(lin[:lin.index(i)]) for lin in subgoals.linearizations if i in lin]
        before = set.intersection(*firsts) if firsts else set()
        out[sg.name] = {a for j in before for a in subgoals.subgoals[j].atoms}
    return out


def hints_report(evidence: Evidence, task: Task, subgoals: SubgoalSet, episodes: int,
                 config: SegmentHintConfig | None = None) -> HintReport:
    """The ranked hints the skill runs in ``evidence`` give for ``task`` (``episodes``: training episodes)."""
    landmarks = [LandmarkRuns(sg.name, sg.atoms,
                              {_labels(k): (int(n), {_labels(e): int(c) for e, c in ends.items()})
                               for k, (n, ends) in evidence.get(sg.name, {}).items()})
                 for sg in subgoals.subgoals]
    return suggest_from_segments(task, landmarks, _always_before(subgoals), episodes,
                                 config or SegmentHintConfig())


def hint_config(dead_end_after: int) -> SegmentHintConfig:
    """The config of a run's hints: dead ends as its learner marks them (``dead_end_after``), else 20 runs."""
    return SegmentHintConfig(dead_end_runs=dead_end_after or DEFAULT_DEAD_END_RUNS)


def to_file(report: HintReport, run: dict[str, Any]) -> dict[str, Any]:
    """``model_hints.json``'s content: schema and version, the run it is from, the report."""
    return {"schema": SCHEMA, "version": VERSION, "run": run, **report.to_json()}


def from_file(data: Any, where: str) -> HintReport:
    """The report in a ``model_hints.json``; ``CheckpointError`` naming ``where`` when it is not one."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise CheckpointError(f"{where}: not a model hints file (schema {SCHEMA!r})")
    if data.get("version") != VERSION:
        raise CheckpointError(f"{where}: model hints version {data.get('version')!r}, this asg reads {VERSION}")
    try:
        return HintReport.from_json(data)
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: corrupt model hints ({type(err).__name__}: {err})") from None


@dataclass(frozen=True)
class RunHints:
    """A run folder's model hints as read back: ``to_json`` is the file, ``lines`` its report."""

    run_dir: str
    data: dict[str, Any]
    report: HintReport

    def to_json(self) -> dict[str, Any]:
        return self.data

    def lines(self, top: int | None = None, brief: bool = False) -> list[str]:
        return self.report.lines(top=top, brief=brief)
