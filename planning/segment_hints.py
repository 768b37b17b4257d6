"""Repair hints from what a learner's skills saw: landmark states they succeeded and failed from (issue 39).

A hierarchical learner runs, for landmark ``L``, a skill from the *landmark state* where the
previous skill stopped (the initial state for the first). Labelled with the labeler's whole
vocabulary, those states say what the model leaves out: when ``L``'s skills succeed only from
states where atom ``X`` holds, and fail every time from a *dead-end* state without ``X``, ``X`` is
needed before ``L`` and the model does not ask for it. A dead end is a landmark state the skills
ran from ``SegmentHintConfig.dead_end_runs`` times without one success (as the learner's
``dead_end_after`` marks its own), or fewer times, never one, where they succeed so reliably from
the states with ``X`` that as many failures in a row would come by chance less often than
``chance`` (a learner that avoids a dead end early rarely tries it 20 times).

The hint is an edit of ``asg.planning.hints`` (one data type, ranking and printing):

* ``missing-precondition``: ``X`` is an atom of the model; add it to the precondition of the
  action that achieves ``L`` (the achiever whose precondition the success states satisfy best);
* ``missing-landmark``: the model has no action making ``X`` true (or lacks ``X`` altogether):
  declare it, add a parameterless achiever (its precondition: the model's atoms that held before
  and after every skill run that made ``X`` true), and add ``X`` to the precondition as above.

Only the earliest ``L`` (in the subgoals' order) is kept for each ``X``. ``support`` counts the
episodes showing the hint: the successful runs of ``L``'s skills (every one from a state with
``X``; one without ``X`` withdraws the hint) plus the failed runs from dead-end states without
``X``. A hint is never asserted from fewer than ``min_episodes`` successful runs; below that it is
a note saying how many more training episodes would give them at the rate so far. Confidence is
Laplace's ``(agree + 1) / (runs + 2)`` over the runs that bear on it: those agreeing (successes,
failures from states without ``X``) and the failures from dead-end states *with* ``X`` (``X`` was
not enough there).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asg.planning.hints import Edit, Hint, HintReport, schema
from asg.planning.mvtr import unmet
from asg.planning.task import Atom, Operator, Task

Labels = frozenset[Atom]


@dataclass(frozen=True)
class SegmentHintConfig:
    """How much evidence a hint from skills needs, and how many are reported."""

    min_episodes: int = 10
    """A hint is never asserted from fewer successful runs of its landmark's skills (episodes)."""
    dead_end_runs: int = 20
    """Runs without one success that make a landmark state a dead end (the learner's
    ``dead_end_after``, 20 in the asg preset)."""
    chance: float = 0.05
    """Fewer runs (never one) make a dead end when the skills succeed so reliably from the states
    with ``X`` that as many failures in a row would happen by chance less often than this."""
    max_hints: int = 10

    def __post_init__(self) -> None:
        if self.min_episodes < 1 or self.dead_end_runs < 1 or self.max_hints < 1:
            raise ValueError("min_episodes, dead_end_runs and max_hints must be >= 1")
        if not 0.0 < self.chance < 1.0:
            raise ValueError("chance must be in (0, 1)")

    def dead_after(self, successes: int, runs: int) -> int:
        """Failed runs in a row that make a state a dead end when the skills succeeded ``successes``
        times in ``runs`` from the states they are compared with: ``dead_end_runs``, or fewer (at least
        2) where ``(1 - p) ** n < chance`` (``p`` Laplace's estimate of that success rate)."""
        miss = 1.0 - (successes + 1) / (runs + 2)
        return min(self.dead_end_runs, max(2, math.floor(math.log(self.chance) / math.log(miss)) + 1))


@dataclass(frozen=True)
class LandmarkRuns:
    """Every run of one landmark's skills, grouped by the landmark state it started from."""

    name: str
    atoms: Labels
    starts: Mapping[Labels, tuple[int, Mapping[Labels, int]]]
    """Start state -> (runs, {end state of a successful run: count})."""

    def successes(self, start: Labels) -> int:
        return sum(self.starts[start][1].values())

    def total(self) -> tuple[int, int]:
        """(runs, successes) over every start state."""
        return sum(n for n, _ in self.starts.values()), sum(map(self.successes, self.starts))


def _achiever(task: Task, landmark: LandmarkRuns, wins: Sequence[Labels]) -> Operator | None:
    """The model action achieving ``landmark`` whose precondition the success states satisfy best."""
    ops = [op for op in task.operators if op.add & landmark.atoms]
    if not ops:
        return None
    return min(ops, key=lambda op: (sum(len(unmet(op, s)) for s in wins), op.name))


def _made_true(x: Atom, landmarks: Sequence[LandmarkRuns], vocabulary: set[Atom]) -> tuple[str, ...]:
    """The model's atoms that held before and after every successful skill run that made ``x`` true."""
    kept: set[Atom] | None = None
    for lm in landmarks:
        for start, (_, ends) in lm.starts.items():
            for end in ends:
                if x not in start and x in end:
                    both = set(start & end & vocabulary)
                    kept = both if kept is None else kept & both
    return tuple(sorted(map(str, kept or ())))


def _edits(x: Atom, action: str, landmarks: Sequence[LandmarkRuns], task: Task) -> tuple[str, list[Edit]]:
    vocabulary = {a.positive() for a in task.facts}
    achieved = {a for op in task.operators for a in op.add}
    if x in achieved:
        return "missing-precondition", [Edit("add-precondition", action, str(x))]
    name = "achieve_" + "_".join((x.predicate, *x.args)).replace("-", "_")
    edits = [] if x in vocabulary else [Edit("declare", "", str(x))]
    edits.append(Edit("add-action", name, str(x), _made_true(x, landmarks, vocabulary)))
    return "missing-landmark", edits + [Edit("add-precondition", action, str(x))]


def _pending(x: Atom, lm: LandmarkRuns, failing: Sequence[Labels], dead_after: int, episodes: int,
             config: SegmentHintConfig) -> tuple[str, int]:
    """Why the hint ``x`` before ``lm`` is not asserted yet, and about how many more episodes it needs."""
    runs, wins = lm.total()
    most = max(lm.starts[s][0] for s in failing)
    more = max(math.ceil((config.min_episodes - wins) * episodes / wins) if wins < config.min_episodes else 0,
               math.ceil((dead_after - most) * episodes / most) if most < dead_after else 0)
    return (f"not asserted yet: {x} before {lm.name}: its skills succeeded {wins} time(s), each from a state "
            f"with {x}, and failed from {len(failing)} state(s) without it, at most {most} time(s) from one "
            f"(a hint needs {config.min_episodes} successes and a dead end, here {dead_after} failed runs "
            f"from one state); about {more} more training episodes at the rate so far"), more


def _landmark_hints(task: Task, lm: LandmarkRuns, landmarks: Sequence[LandmarkRuns], known: set[Atom],
                    episodes: int, config: SegmentHintConfig) -> tuple[dict[Atom, Hint], dict[Atom, tuple[str, int]]]:
    """The hints (and the notes on those not yet asserted) that ``lm``'s runs give, per atom."""
    runs, wins = lm.total()
    won = [s for s in lm.starts if lm.successes(s)]
    op = _achiever(task, lm, won) if won else None
    if op is None:
        return {}, {}
    hints, pending = {}, {}
    known = known | set(op.pre) | lm.atoms
    vocabulary = {a.positive() for a in task.facts}
    for x in sorted(frozenset.intersection(*won) - known):
        failing = [s for s, (_, ends) in lm.starts.items() if not ends and x not in s]
        if not failing:
            continue
        with_x = sum(n for st, (n, _) in lm.starts.items() if x in st)
        dead_after = config.dead_after(wins, with_x)
        dead = [st for st, (n, ends) in lm.starts.items() if not ends and n >= dead_after]
        without = [st for st in failing if st in dead]
        if wins < config.min_episodes or not without:
            pending[x] = _pending(x, lm, failing, dead_after, episodes, config)
            continue
        kind, edits = _edits(x, schema(op), landmarks, task)
        support = wins + sum(lm.starts[st][0] for st in without)
        against = sum(lm.starts[st][0] for st in dead if x in st)  # X was not enough there
        agree = wins + sum(lm.starts[st][0] for st in failing)
        reason = (f"{lm.name}'s skills succeeded only from landmark states where {x} held ({wins} of {with_x} "
                  f"runs from {len(won)} such state(s)) and failed every run from {len(without)} dead-end "
                  f"state(s) without it ({dead_after} or more failed runs each)"
                  + ("; the model does not mention it" if x not in vocabulary else ""))
        evidence = (f"{support} of {runs} runs of {lm.name}'s skills ({wins} successes, "
                    f"{support - wins} dead-end failures); {agree} of {agree + against} runs agree")
        hints[x] = Hint(kind, tuple(edits), (str(x),), reason, support, runs,
                        round((agree + 1) / (agree + against + 2), 3), agree, agree + against, (), evidence)
    return hints, pending


def suggest_from_segments(task: Task, landmarks: Sequence[LandmarkRuns], before: Mapping[str, set[Atom]],
                          episodes: int, config: SegmentHintConfig = SegmentHintConfig()) -> HintReport:
    """Ranked hints for ``task`` from the runs of each landmark's skills (``landmarks`` in the
    subgoals' order); ``before``: per landmark, the atoms the model orders before it; ``episodes``:
    the training episodes the runs come from (for how many more are needed)."""
    hints: dict[Atom, Hint] = {}
    pending: dict[Atom, tuple[str, int]] = {}
    notes: list[str] = []
    for lm in landmarks:
        runs, wins = lm.total()
        if runs and not wins:
            notes.append(f"{lm.name}: its skills never succeeded in {runs} runs from {len(lm.starts)} landmark "
                         "state(s): nothing yet tells what it needs")
        found, unsure = _landmark_hints(task, lm, landmarks, before.get(lm.name, set()), episodes, config)
        for x, hint in found.items():
            hints.setdefault(x, hint)  # the earliest landmark only
        for x, note in unsure.items():
            pending.setdefault(x, note)
    ranked = sorted(hints.values(), key=Hint.rank_key)[:config.max_hints]
    waiting = [pending[x] for x in sorted(pending) if x not in hints]
    notes += [note for note, _ in waiting][:config.max_hints]
    next_one = min((more for _, more in waiting), default=None)
    basis = (f"from {episodes} training episodes; each needs {config.min_episodes} successes of its landmark's "
             "skills and a dead-end landmark state without its atom")
    if ranked or any(lm.total()[1] >= config.min_episodes for lm in landmarks):
        why = ("none asserted yet" if pending else
               "no landmark state the skills failed from lacks an atom every success had")
        return HintReport("ok", episodes, config.min_episodes, tuple(ranked), next_one,
                          message="" if ranked else why, title="model hints", basis=basis, notes=tuple(notes))
    best = max(landmarks, key=lambda lm: lm.total()[1], default=None)
    wins = best.total()[1] if best is not None else 0
    more = math.ceil((config.min_episodes - wins) * episodes / wins) if best is not None and wins else None
    rate = (f"the most, {best.name}'s, {wins}: about {more} more training episodes at the rate so far"
            if best is not None and more is not None else "none yet: train longer")
    message = (f"no landmark's skills succeeded in {config.min_episodes} of {episodes} training episodes "
               f"({rate}); no hint asserted")
    return HintReport("too-few-episodes", episodes, config.min_episodes, (), more, message=message,
                      title="model hints", basis=basis, notes=tuple(notes))
