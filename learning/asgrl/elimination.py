"""Eliminating the random steps that undo a kept landmark (``HierarchicalConfig.eliminate_undoing``; ours).

A skill whose landmark needs one achieved before it (the key in hand at the locked door) explores by
ε-greedy steps, and until its first success those steps are nearly all random. On MiniGrid a random
step lets go of the key one time in seven where the cell ahead is free, and a walk that keeps the key
opens its door 3-9 times as often (``benchmarks/carry_walk.py``, docs/asgrl.md "A key carried is a key
dropped"). With ``protect_landmarks`` the learner already sees such a step: the run ends "undone".
This module learns from those signals which actions to leave out of the random draw, as Zahavy et al.
(2018, "Learn What Not to Learn: Action Elimination with Deep Reinforcement Learning") learn from an
elimination signal which actions not to explore.

The context of a step is the set of kept landmarks (the needed landmarks that held when the run began,
``SubgoalWrapper.kept``). Per context and action the module counts the training steps taken and those
that made a kept landmark false. Once an action has been tried ``MIN_TRIES`` times in a context and
undid a kept landmark in at least ``RATE`` (a tenth) of them, a random step in that context draws among the
other actions. Greedy steps are not masked: the Q-network learns from the failed runs as before. A
context with no kept landmark never eliminates anything, and the last action is never eliminated.
The counts belong to the run (checkpointed, resumed).
"""
from __future__ import annotations

from typing import Any

import numpy as np

MIN_TRIES = 20  # tries of an action in a context before it may be eliminated there
# The share of those tries that undid a kept landmark at or above which it is. MiniGrid's drop lets go
# of the key only where the cell ahead is free: 19-22 % of the door runs' drops on UnlockToUnlock, 19 of
# the first 20 on LockedRoom; a toggle that closes the door just opened undid it in 1-3 % of its tries
# there (seed 0 of each, the counts in a run's checkpoint).
RATE = 0.1


def random_action(rng: np.random.Generator, n_actions: int, allowed: np.ndarray | None = None) -> int:
    """An ε-greedy learner's random action: uniform over all ``n_actions`` (the draw of the learners
    without the switch, unchanged), or over ``allowed`` (:meth:`UndoElimination.allowed`)."""
    return int(rng.integers(n_actions)) if allowed is None else int(rng.choice(allowed))


class UndoElimination:
    """Per (kept landmarks, action): training steps taken, and those that undid a kept landmark."""

    def __init__(self, n_actions: int) -> None:
        self.n_actions = n_actions
        self.tries: dict[tuple[int, ...], np.ndarray] = {}
        self.undos: dict[tuple[int, ...], np.ndarray] = {}

    def record(self, kept: tuple[int, ...], action: int, undone: bool) -> None:
        """Count one training step of ``action`` taken with ``kept`` held; ``undone``: it made one false."""
        if not kept:
            return
        if kept not in self.tries:
            self.tries[kept] = np.zeros(self.n_actions, dtype=np.int64)
            self.undos[kept] = np.zeros(self.n_actions, dtype=np.int64)
        self.tries[kept][action] += 1
        self.undos[kept][action] += undone

    def allowed(self, kept: tuple[int, ...]) -> np.ndarray | None:
        """The actions a random step may draw with ``kept`` held (None: all of them)."""
        tries = self.tries.get(kept)
        if tries is None:
            return None
        out = ~((tries >= MIN_TRIES) & (self.undos[kept] >= RATE * tries))
        return None if out.all() or not out.any() else np.flatnonzero(out)

    def state_dict(self) -> dict[str, Any]:
        """The counts as data: per context its kept landmarks and the per-action counts."""
        keys = sorted(self.tries)
        return {"kept": [list(k) for k in keys], "tries": [self.tries[k].tolist() for k in keys],
                "undos": [self.undos[k].tolist() for k in keys]}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        self.tries, self.undos = {}, {}
        for kept, tries, undos in zip(data["kept"], data["tries"], data["undos"]):
            if len(tries) != self.n_actions or len(undos) != self.n_actions:
                raise ValueError(f"action elimination counts for {len(tries)} actions, the env has {self.n_actions}")
            key = tuple(int(j) for j in kept)
            self.tries[key] = np.asarray(tries, dtype=np.int64)
            self.undos[key] = np.asarray(undos, dtype=np.int64)
