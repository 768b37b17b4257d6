"""Subgoals from the symbolic model, and the wrapper that turns one into a skill MDP.

``landmark_subgoals(task)`` takes the subgoals and their linearizations from the landmark graph
(fact landmarks that occur in action preconditions or the goal, ASGRL Sec. 4.2);
``plan_subgoals(task)`` takes one subgoal per operator of a plan (the Plan-HRL baseline).
Nothing here is typed in by hand: both come from the model. With ``again`` (``learner.needed_again``,
ours) the landmarks the model needs again become subgoals too: an atom true at the start that the way
to the goal takes away and needs back (the empty hand before the ball), from the landmark graph's
reasonable orderings (``LandmarkGraph.needed_again``).

``SubgoalWrapper`` runs one skill at a time on an env: reward R_L = 1 and termination when the
target subgoal's atoms become true, failure (termination, reward 0) when another pending subgoal
comes true first (strict ordering, reference_code.md §1.7) or the env terminates, and
truncation after ``max_steps`` (a timeout bootstraps, §1.5).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from asg.learning.errors import DomainError
from asg.planning import compute_landmarks, find_plan
from asg.planning.landmark_graph import LandmarkGraph
from asg.planning.task import Atom, Task

Labeler = Callable[[gym.Env], "frozenset[Atom] | set[Atom]"]


@dataclass(frozen=True)
class Subgoal:
    """A set of atoms a skill must make true; ``name`` is e.g. ``(has-key)``."""

    name: str
    atoms: frozenset[Atom]
    goal: bool = False
    after: str = ""
    """A landmark needed again: the subgoal it must come true again after. Its atoms hold at the
    start, and it never comes true out of turn (``SubgoalWrapper``)."""

    def holds(self, labels: frozenset[Atom] | set[Atom]) -> bool:
        """All atoms true in ``labels``."""
        return self.atoms <= labels


@dataclass(frozen=True)
class SubgoalSet:
    """Subgoals, the orders in which they may be achieved, and the task goal."""

    subgoals: tuple[Subgoal, ...]
    linearizations: tuple[tuple[int, ...], ...]  # indices into subgoals, each a full order
    goal: frozenset[Atom]
    negative_goal: frozenset[Atom] = frozenset()
    source: str = "landmarks"
    # per subgoal, the subgoals ordered greedy-necessarily before it: by the model they must still
    # hold when it first comes true (each of its first achievers needs them; ``protect_landmarks``)
    needs: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if not self.subgoals or not self.linearizations:
            raise DomainError("the model yields no subgoals: its goal is true initially or unreachable")
        if not self.needs:
            object.__setattr__(self, "needs", tuple(() for _ in self.subgoals))
        if len(self.needs) != len(self.subgoals):
            raise DomainError(f"needs: expected one entry per subgoal ({len(self.subgoals)}), got {len(self.needs)}")

    def __len__(self) -> int:
        return len(self.subgoals)

    def names(self) -> list[str]:
        """Subgoal names in index order."""
        return [sg.name for sg in self.subgoals]

    def next_subgoals(self, achieved: Sequence[int]) -> tuple[int, ...]:
        """Subgoals that some linearization puts right after the ``achieved`` prefix."""
        depth = len(achieved)
        prefix = tuple(achieved)
        out: list[int] = []
        for lin in self.linearizations:
            if len(lin) > depth and lin[:depth] == prefix and lin[depth] not in out:
                out.append(lin[depth])
        return tuple(out)

    def continuing(self, prefix: Sequence[int], more: Iterable[int]) -> tuple[int, ...] | None:
        """``more`` in the order of a linearization that puts them right after ``prefix``; None
        when no linearization does."""
        n, more = len(prefix), set(more)
        for lin in self.linearizations:
            if lin[:n] == tuple(prefix) and set(lin[n:n + len(more)]) == more:
                return lin[n:n + len(more)]
        return None

    def goal_reached(self, labels: frozenset[Atom] | set[Atom]) -> bool:
        """The task goal holds in ``labels``."""
        return self.goal <= labels and not (self.negative_goal & labels)

    def to_json(self) -> dict[str, Any]:
        """Everything a learner is built from: subgoals (name, atoms, goal flag), linearizations (names),
        the task goal; ``subgoals.json`` of a run folder, read back by :meth:`from_json`."""
        return {"source": self.source, "subgoals": self.names(),
                "linearizations": [[self.subgoals[i].name for i in lin] for lin in self.linearizations],
                "atoms": {sg.name: sorted(str(a) for a in sg.atoms) for sg in self.subgoals},
                "goal_subgoals": [sg.name for sg in self.subgoals if sg.goal],
                "goal": sorted(str(a) for a in self.goal), "negative_goal": sorted(str(a) for a in self.negative_goal),
                "needs": {sg.name: [self.subgoals[j].name for j in need]
                          for sg, need in zip(self.subgoals, self.needs) if need},
                "again": {sg.name: sg.after for sg in self.subgoals if sg.after}}

    @classmethod
    def from_json(cls, data: Any, where: str) -> SubgoalSet:
        """Rebuild from :meth:`to_json` output; ``DomainError`` naming ``where`` when it does not fit."""
        try:
            names = list(data["subgoals"])
            index = {name: i for i, name in enumerate(names)}
            again = data.get("again", {})  # absent in run folders before ``needed_again``
            subgoals = tuple(Subgoal(name, frozenset(Atom.parse(a) for a in data["atoms"][name]),
                                     name in data["goal_subgoals"], str(again.get(name, ""))) for name in names)
            if any(sg.after and sg.after not in index for sg in subgoals):
                raise ValueError("an again subgoal names no subgoal it comes after")
            lins = tuple(tuple(index[name] for name in lin) for lin in data["linearizations"])
            needs = data.get("needs", {})  # absent in run folders before ``protect_landmarks``
            return cls(subgoals, lins, frozenset(Atom.parse(a) for a in data["goal"]),
                       frozenset(Atom.parse(a) for a in data["negative_goal"]), str(data["source"]),
                       tuple(tuple(index[j] for j in needs.get(name, ())) for name in names))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise DomainError(f"{where}: not a subgoal set ({type(err).__name__}: {err})") from None


def _unique(seq: Iterable[int]) -> tuple[int, ...]:
    out: list[int] = []
    for item in seq:
        if item not in out:
            out.append(item)
    return tuple(out)


def landmark_subgoals(task: Task, limit: int = 100, graph: LandmarkGraph | None = None,
                      again: bool = False) -> SubgoalSet:
    """ASGRL's subgoals: ``LandmarkGraph.subgoals()`` and its linearizations restricted to them
    (``graph``: the task's landmark graph when the caller has it already), and with ``again`` the
    landmarks needed again (``needed_again_subgoals``).

    The factory is h^m (the paper's), or RHW for a model with axioms, which h^m does not take
    (as Fast Downward's ``lm_hm``). A learner checks subgoals and the goal on its labeler's atoms,
    so a goal the translator had to compile into an axiom (``new-axiom@N``: a goal that is not a
    conjunction of literals) is refused; landmarks on such atoms are never subgoals."""
    hidden = sorted(str(a) for a in task.goal | task.negative_goal if a.predicate.startswith("new-axiom@"))
    if hidden:
        raise DomainError(f"the model's goal is not a conjunction of literals (compiled to {hidden[0]}): a "
                          "learner checks the goal on its labeler's atoms; write the goal as a conjunction")
    graph = graph or compute_landmarks(task, factory="rhw" if task.axioms else "hm")
    landmarks = list(graph.subgoals())
    position = {lm.id: i for i, lm in enumerate(landmarks)}
    subgoals = tuple(Subgoal(" & ".join(sorted(str(a) for a in lm.atoms)), frozenset(lm.atoms), bool(lm.goal))
                     for lm in landmarks)
    lins: list[tuple[int, ...]] = []
    for lin in graph.linearizations(limit=limit):
        seq = _unique(position[lm.id] for lm in lin if lm.id in position)
        if len(seq) == len(subgoals) and seq not in lins:
            lins.append(seq)
    if not lins and subgoals:
        lins.append(tuple(range(len(subgoals))))  # subgoals() is itself in a topological order
    needs = tuple(tuple(sorted(position[u] for u, kind in graph.in_edges(lm.id).items()
                               if kind == "greedy-necessary" and u in position)) for lm in landmarks)
    found = SubgoalSet(subgoals, tuple(lins), task.goal, task.negative_goal, "landmarks", needs)
    return needed_again_subgoals(task, found) if again else found


def needed_again_subgoals(task: Task, found: SubgoalSet) -> SubgoalSet:
    """``found`` with a subgoal for each landmark the model needs again (Hoffmann et al. 2004's
    reasonable orderings; LAMA's landmarks "required again", Richter & Westphal 2010): an atom true
    at the start, ordered reasonably after a subgoal Y, and needed greedy-necessarily by a subgoal
    W that every linearization puts after Y. The new subgoal, ``X again after Y``, goes right before
    the first such W in each linearization. W's skills do not keep it (``protect_landmarks``): the
    step that reaches W may take X away (the pick-up that fills the hand), and where one action both
    takes X away and reaches W (MiniGrid's pick-up), ``eliminate_undoing`` would learn to leave out
    the action W needs. A pair with no such W in some linearization is left out."""
    graph = compute_landmarks(task, factory="rhw" if task.axioms else "hm", reasonable=True)
    index = {sg.atoms: i for i, sg in enumerate(found.subgoals)}
    subgoals, lins = list(found.subgoals), [list(lin) for lin in found.linearizations]
    for lm, after in graph.needed_again():
        y = index.get(after.atoms)
        if y is None:
            continue
        users = {index[graph.by_id(v).atoms] for v, kind in graph.out_edges(lm.id).items()
                 if kind == "greedy-necessary" and graph.by_id(v).atoms in index}
        firsts = [next((w for w in lin[lin.index(y) + 1:] if w in users), None) for lin in lins]
        if None in firsts:
            continue
        new = len(subgoals)
        subgoals.append(Subgoal(f"{lm} again after {after}", frozenset(lm.atoms), after=subgoals[y].name))
        for lin, w in zip(lins, firsts):
            lin.insert(lin.index(w), new)
    unique = tuple(dict.fromkeys(tuple(lin) for lin in lins))
    needs = found.needs + tuple(() for _ in subgoals[len(found.subgoals):])
    return SubgoalSet(tuple(subgoals), unique, found.goal, found.negative_goal, found.source, needs)


def plan_subgoals(task: Task) -> SubgoalSet:
    """Plan-HRL's subgoals: one per plan operator, the facts it adds that were not yet true."""
    result = find_plan(task)
    plan = list(result.plan or [])
    state = task.init
    subgoals: list[Subgoal] = []
    for op in plan:
        new = frozenset(op.add - state)
        state = op.apply(state)
        if new:
            subgoals.append(Subgoal(op.name, new, task.goal_reached(state)))
    if not subgoals:
        raise DomainError(f"no plan with effects for {task.name!r} (planner status {result.status!r})")
    return SubgoalSet(tuple(subgoals), (tuple(range(len(subgoals))),), task.goal, task.negative_goal, "plan")


class SubgoalWrapper(gym.Wrapper):
    """The skill MDP of one subgoal at a time: call ``begin`` before each skill.

    ``info["subgoal"]`` is ``"reached"``, ``"violated"`` (another pending subgoal came true),
    ``"undone"`` (with ``protect``: a subgoal the target needs, achieved before, turned false; their
    indices in ``undone``),
    ``"env-terminated"`` or ``None`` (also kept in ``status``); ``info["labels"]`` holds the true atoms and
    ``info["env_over"]`` whether the wrapped env's episode ended. With ``together``, a step that
    makes the target true together with the pending subgoals that a linearization puts right after
    it is ``"reached"``, not ``"violated"``; those subgoals, in that order, are in ``together`` until
    the next ``begin``. A run is truncated after ``max_steps`` steps, or the ``max_steps`` given to
    ``begin`` (``skill_horizon``).
    """

    def __init__(self, env: gym.Env, labeler: Labeler, subgoals: SubgoalSet, *,
                 max_steps: int = 700, strict: bool = True, reward: float = 1.0,
                 track: bool = False, protect: bool = False, together: bool = False) -> None:
        super().__init__(env)
        self.labeler = labeler
        self.subgoal_set = subgoals
        self.max_steps = max_steps
        self.strict = strict
        self.protect = protect
        self.allow_together = together
        self._prefix: tuple[int, ...] = ()  # the achieved subgoals, then the target (``together``)
        self.together: tuple[int, ...] = ()  # the subgoals the last step reached with the target
        self._kept: tuple[tuple[int, frozenset[Atom]], ...] = ()  # what the target needs, still true (``protect``)
        self.undone: tuple[int, ...] = ()  # the needed subgoals the last step made false (status "undone")
        self.reward_value = reward
        self.labels: frozenset[Atom] = frozenset()
        self.track = track
        self.seen: set[Atom] = set()  # every atom true at some step (when tracking)
        self.target: Subgoal | None = None
        self._watch: tuple[tuple[int, frozenset[Atom]], ...] = ()  # pending subgoals other than the target
        self._steps = 0
        self._cap = max_steps  # the running skill's step budget
        self.status: str | None = None  # the last step's subgoal status

    def _label(self) -> frozenset[Atom]:
        labels = self.labeler(self.env)
        self.labels = labels if isinstance(labels, frozenset) else frozenset(labels)
        if self.track:
            self.seen |= self.labels
        return self.labels

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the env; a subgoal already true here means model and env disagree."""
        obs, info = self.env.reset(**kwargs)
        self.seen = set()
        labels = self._label()
        for sg in self.subgoal_set.subgoals:
            if sg.holds(labels) and not sg.after:
                raise DomainError(f"subgoal {sg.name} is true at reset, but the model says it is not initially true")
        self.target = None
        return obs, {**info, "labels": labels}

    @property
    def kept(self) -> tuple[int, ...]:
        """The needed landmarks the running skill keeps (``protect``; () otherwise)."""
        return tuple(j for j, _ in self._kept)

    @property
    def steps(self) -> int:
        """Steps of the running skill so far."""
        return self._steps

    def begin(self, index: int, achieved: Sequence[int], max_steps: int | None = None) -> bool:
        """Target subgoal ``index`` next, for at most ``max_steps`` steps (default: the wrapper's);
        returns True when it already holds."""
        self.target = self.subgoal_set.subgoals[index]
        done = set(achieved) | {index}
        # a landmark needed again never comes true out of turn: it holds from the start, and a
        # reasonable ordering says where it pays to achieve it, not where it must be
        self._watch = tuple((i, sg.atoms) for i, sg in enumerate(self.subgoal_set.subgoals)
                            if i not in done and not sg.after)
        self._prefix = (*achieved, index)
        self.together = ()
        if self.protect:
            subgoals = self.subgoal_set.subgoals
            self._kept = tuple((j, subgoals[j].atoms) for j in self.subgoal_set.needs[index]
                               if j in achieved and subgoals[j].holds(self.labels))
        self.undone = ()
        self._steps = 0
        self._cap = self.max_steps if max_steps is None else max_steps
        self.status = None
        return self.target.holds(self.labels)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One env step scored for the current target."""
        if self.target is None:
            raise RuntimeError("SubgoalWrapper.step before begin()")
        obs, _, terminated, truncated, info = self.env.step(action)
        labels = self._label()
        self._steps += 1
        status = None
        early = tuple(i for i, atoms in self._watch if atoms <= labels)
        hit = self.target.atoms <= labels
        together = self.subgoal_set.continuing(self._prefix, early) if hit and early and self.allow_together else None
        if together:  # the target and the landmarks right after it, in one step
            status, self.together = "reached", together
        elif self.strict and early:
            status = "violated"
        elif hit:
            status = "reached"
        elif lost := tuple(j for j, atoms in self._kept if not atoms <= labels):
            status, self.undone = "undone", lost
        elif terminated:
            status = "env-terminated"
        self.status = status
        reward = self.reward_value if status == "reached" else 0.0
        info = {**info, "subgoal": status, "labels": labels, "env_over": terminated or truncated}
        return obs, reward, status is not None, truncated or self._steps >= self._cap, info
