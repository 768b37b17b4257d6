"""The meta-controller: tabular Q-learning over (meta-state, (subgoal, skill)) (ASGRL Sec. 4.2).

Meta-states (App. E, F.3): ``history_state`` is the tuple of (subgoal, skill) pairs run so far
this episode; ``low_level_state`` is (achieved subgoals, low-level state id); ``landmark_state``
(ours) the achieved subgoals alone. Actions are
(subgoal, skill) pairs: the skill for the next subgoal, and which subgoal when linearizations
branch. The update follows reference_code.md §1.7: lr 0.5, γ 0.99, target r + γ·max over the next
decision's actions (0 when terminal), plus replay from a small memory and from meta-SIL (whole
episodes scoring at least the best so far).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asg.learning.asgrl.config import MetaConfig

MetaAction = tuple[int, int]  # (subgoal index, skill index)


@dataclass(frozen=True)
class MetaTransition:
    """One skill execution seen by the meta-controller."""

    state: Hashable
    action: MetaAction
    reward: float
    next_state: Hashable
    next_actions: tuple[MetaAction, ...]
    terminal: bool


def history_state(history: Sequence[MetaAction]) -> Hashable:
    """History-based meta-state (App. E)."""
    return tuple(history)


def landmark_state(achieved: Sequence[int]) -> Hashable:
    """Landmark meta-state (``meta.state = "landmarks"``, ours): the subgoals achieved so far, in
    order, without which skill achieved them; k skills a landmark give one state where the history
    gives k^depth."""
    return tuple(achieved)


def low_level_state(achieved: Sequence[int], state_id: int) -> Hashable:
    """Low-level meta-state (F.3): the achieved subgoals and the current state id."""
    return (tuple(achieved), state_id)


class MetaController:
    """ε-greedy tabular Q over meta-states; exploration uniform over the allowed actions."""

    def __init__(self, cfg: MetaConfig) -> None:
        self.cfg = cfg
        self.q: dict[Hashable, dict[MetaAction, float]] = {}
        self.epsilon = cfg.epsilon_start
        self.memory: deque[MetaTransition] = deque(maxlen=cfg.memory_size)
        self.sil: deque[MetaTransition] = deque(maxlen=cfg.memory_size)
        self.best_score = 0.0
        self.updates = 0

    def value(self, state: Hashable, action: MetaAction) -> float:
        """Q(state, action), 0 when unseen."""
        row = self.q.get(state)
        return row.get(action, 0.0) if row else 0.0

    def best(self, state: Hashable, actions: Sequence[MetaAction]) -> tuple[MetaAction, float]:
        """The greedy action (first on ties) and its value."""
        row = self.q.get(state) or {}
        best_a, best_v = actions[0], row.get(actions[0], 0.0)
        for a in actions[1:]:
            v = row.get(a, 0.0)
            if v > best_v:
                best_a, best_v = a, v
        return best_a, best_v

    def choose(self, state: Hashable, actions: Sequence[MetaAction], rng: np.random.Generator,
               greedy: bool = False) -> MetaAction:
        """ε-greedy (or greedy) choice among ``actions``."""
        if not greedy and rng.random() < self.epsilon:
            return actions[int(rng.integers(len(actions)))]
        return self.best(state, actions)[0]

    def _apply(self, t: MetaTransition) -> None:
        target = t.reward
        if not t.terminal and t.next_actions:
            target += self.cfg.gamma * self.best(t.next_state, t.next_actions)[1]
        row = self.q.setdefault(t.state, {})
        old = row.get(t.action, 0.0)
        row[t.action] = old + self.cfg.lr * (target - old)
        self.updates += 1

    def _replay(self, source: deque[MetaTransition], rng: np.random.Generator) -> None:
        if not source:
            return
        n = min(self.cfg.batch_size, len(source))
        for _ in range(self.cfg.replay_batches):
            for i in rng.integers(0, len(source), n):
                self._apply(source[int(i)])

    def update(self, t: MetaTransition, rng: np.random.Generator) -> None:
        """Learn from one transition, then replay memory and meta-SIL (§1.7)."""
        self.memory.append(t)
        self._apply(t)
        self._replay(self.memory, rng)
        self._replay(self.sil, rng)

    def state_dict(self) -> dict[str, Any]:
        """Q-values, replay memories and counters (transitions as plain tuples)."""
        def rows(source: deque[MetaTransition]) -> list[tuple]:
            return [(t.state, t.action, t.reward, t.next_state, t.next_actions, t.terminal) for t in source]
        return {"q": self.q, "epsilon": self.epsilon, "memory": rows(self.memory), "sil": rows(self.sil),
                "best_score": self.best_score, "updates": self.updates}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        def transitions(rows: list) -> list[MetaTransition]:
            return [MetaTransition(s, tuple(a), float(r), s2, tuple(tuple(x) for x in acts), bool(done))
                    for s, a, r, s2, acts, done in rows]
        self.q = {state: {tuple(a): float(v) for a, v in row.items()} for state, row in data["q"].items()}
        self.epsilon = float(data["epsilon"])
        self.memory = deque(transitions(data["memory"]), maxlen=self.cfg.memory_size)
        self.sil = deque(transitions(data["sil"]), maxlen=self.cfg.memory_size)
        self.best_score, self.updates = float(data["best_score"]), int(data["updates"])

    def end_episode(self, trace: Sequence[MetaTransition], score: float, success: bool) -> None:
        """Keep episodes scoring at least the best so far in meta-SIL; anneal ε on success."""
        if score > 0 and score >= self.best_score:
            self.best_score = score
            self.sil.extend(trace)
        if success:
            self.epsilon = max(self.cfg.epsilon_min, self.epsilon * self.cfg.epsilon_decay)
