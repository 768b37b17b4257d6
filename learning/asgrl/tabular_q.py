"""Tabular Q-learning with replay and self-imitation, vectorised over replay batches.

Pieces: ``StateIndex`` (hashable observation -> dense int id), ``TableKeys`` (a learner's choice of
exact ids or image prototypes), ``QTable`` (growing
``(n_states, n_actions)`` array), ``TransitionBuffer`` (growing ring of transitions),
``q_update`` (one batched Q-learning step) and ``TabularQ`` (ε-greedy learner with the official
schedule of reference_code.md §1.5). No torch here.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from asg.learning.asgrl.clustering import PrototypeIndex, cluster_feature
from asg.learning.asgrl.config import QConfig
from asg.learning.asgrl.elimination import random_action


def obs_key(obs: Any) -> Hashable:
    """A hashable, exact key of an observation (arrays by bytes, dicts by sorted fields)."""
    if isinstance(obs, np.ndarray):
        return obs.tobytes()
    if isinstance(obs, dict):
        return tuple(obs_key(obs[name]) for name in sorted(obs))
    if isinstance(obs, (tuple, list)):
        return tuple(obs_key(item) for item in obs)
    if isinstance(obs, np.generic):
        return obs.item()
    return obs


class StateIndex:
    """Dense integer ids for observation keys, in order of first visit."""

    def __init__(self) -> None:
        self._ids: dict[Hashable, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def intern(self, key: Hashable) -> int:
        """The id of ``key``, adding it when new."""
        ids = self._ids
        found = ids.get(key)
        if found is None:
            found = ids[key] = len(ids)
        return found

    def lookup(self, key: Hashable) -> int:
        """The id of ``key``, or -1 when never seen (does not add it)."""
        return self._ids.get(key, -1)

    def state_dict(self) -> dict[str, Any]:
        """The keys in id order; equal-length byte keys (array observations) as one (n, L) array."""
        keys = list(self._ids)
        if keys and all(isinstance(k, bytes) for k in keys) and len({len(k) for k in keys}) == 1:
            return {"rows": np.frombuffer(b"".join(keys), np.uint8).reshape(len(keys), -1)}
        return {"keys": keys}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        if "rows" not in data and "keys" not in data:
            raise ValueError("expected an exact observation index (rows or keys), got image prototypes")
        keys = [row.tobytes() for row in data["rows"]] if "rows" in data else list(data["keys"])
        self._ids = {key: i for i, key in enumerate(keys)}
        if len(self._ids) != len(keys):
            raise ValueError("duplicate state keys")


class TableKeys:
    """Table ids of observations, as a learner's config says (``state_key``): ``exact``, a ``StateIndex``
    over ``obs_key``; ``prototypes``, a ``clustering.PrototypeIndex`` over ``clustering.cluster_feature``
    (images that never repeat). ``cfg``: a ``HierarchicalConfig`` or ``FlatConfig``."""

    def __init__(self, cfg: Any) -> None:
        self.pool = cfg.prototype_pool
        self.prototypes = cfg.state_key == "prototypes"
        self.index: StateIndex | PrototypeIndex = (
            PrototypeIndex(cfg.prototype_radius, cfg.prototype_mean_cap) if self.prototypes else StateIndex())

    def __len__(self) -> int:
        return len(self.index)

    def __call__(self, obs: Any, learn: bool) -> int:
        """The id of ``obs``: added (or its prototype moved) when ``learn``; else looked up (-1: unseen)."""
        key = cluster_feature(obs, self.pool) if self.prototypes else obs_key(obs)
        return self.index.intern(key) if learn else self.index.lookup(key)

    def state_dict(self) -> dict[str, Any]:
        """The index's own state (``StateIndex`` or ``PrototypeIndex``)."""
        return self.index.state_dict()

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore; ``ValueError`` when the checkpoint holds the other kind of index."""
        self.index.load_state_dict(data)


class QTable:
    """Q-values, one row per state id (``init`` for states not yet seen, 0 by default)."""

    def __init__(self, n_actions: int, capacity: int = 256, init: float = 0.0) -> None:
        self.n_actions, self.init = n_actions, init
        self.values = np.full((capacity, n_actions), init)  # (rows, n_actions)

    def ensure(self, n_states: int) -> None:
        """Grow (doubling) so that ids < ``n_states`` have a row."""
        rows = self.values.shape[0]
        if n_states > rows:
            grown = np.full((max(n_states, 2 * rows), self.n_actions), self.init)
            grown[:rows] = self.values
            self.values = grown

    def greedy(self, s: int) -> int:
        """argmax_a Q(s, a), first index on ties; action 0 for unknown states."""
        if s < 0 or s >= self.values.shape[0]:
            return 0
        return int(self.values[s].argmax())

    def value(self, s: int) -> float:
        """max_a Q(s, a) (``init`` for unknown states)."""
        if s < 0 or s >= self.values.shape[0]:
            return self.init
        return float(self.values[s].max())


_FIELDS = (("s", np.int32), ("a", np.int16), ("s2", np.int32), ("r", np.float32),
           ("done", np.bool_), ("bonus", np.bool_))


class RingBuffer:
    """A ring buffer of named fields (``name``, dtype, row shape) that grows by doubling up to
    ``capacity`` and then overwrites the oldest rows; sampled uniformly; checkpointed as its arrays.
    Subclasses add rows through :meth:`_slot` (the index to write next)."""

    label = "ring buffer"  # what its load errors call it

    def __init__(self, fields: Sequence[tuple[str, Any, tuple[int, ...]]], capacity: int, initial: int = 1024) -> None:
        self.capacity = capacity
        size = min(capacity, initial)
        self.data: dict[str, np.ndarray] = {name: np.zeros((size, *shape), dtype) for name, dtype, shape in fields}
        self.size = 0
        self._next = 0

    def __len__(self) -> int:
        return self.size

    def _slot(self) -> int:
        """The row to write next (growing the arrays, or wrapping round once full); counts it."""
        rows = len(next(iter(self.data.values())))
        if self._next >= rows:
            if rows < self.capacity:
                new = min(self.capacity, 2 * rows)
                for name, arr in self.data.items():
                    grown = np.zeros((new, *arr.shape[1:]), arr.dtype)
                    grown[:rows] = arr
                    self.data[name] = grown
            else:
                self._next = 0
        i = self._next
        self._next = i + 1
        self.size = min(self.size + 1, self.capacity)
        return i

    def sample(self, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
        """``n`` rows drawn uniformly with replacement."""
        idx = rng.integers(0, self.size, n)
        return {name: arr[idx] for name, arr in self.data.items()}

    def state_dict(self) -> dict[str, Any]:
        """The allocated arrays (their length drives the doubling), size and ring position."""
        return {"data": dict(self.data), "size": self.size, "next": self._next}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output (the capacity comes from the config); ``ValueError``
        when the arrays or counters do not fit this buffer's fields."""
        arrays = {name: np.asarray(data["data"][name]) for name in self.data}
        rows = {len(a) for a in arrays.values()}
        if len(rows) != 1 or rows.pop() > self.capacity or any(
                arrays[name].dtype != ref.dtype or arrays[name].shape[1:] != ref.shape[1:]
                for name, ref in self.data.items()):
            raise ValueError(f"{self.label} arrays of the wrong type or shape")
        size, nxt = int(data["size"]), int(data["next"])
        if not (0 <= size <= self.capacity and 0 <= nxt <= len(next(iter(arrays.values())))):
            raise ValueError(f"{self.label} counters out of range")
        self.data, self.size, self._next = arrays, size, nxt


class TransitionBuffer(RingBuffer):
    """A ring buffer of (s, a, s2, r, done, bonus) that grows by doubling up to ``capacity``.

    ``bonus`` marks transitions whose reward gets a term computed at replay time (the diversity
    reward of a landmark state, recomputed with the current counts as in §1.6).
    """

    label = "transition buffer"

    def __init__(self, capacity: int, initial: int = 1024) -> None:
        super().__init__([(name, dtype, ()) for name, dtype in _FIELDS], capacity, initial)

    def add(self, s: int, a: int, s2: int, r: float, done: bool, bonus: bool) -> None:
        """Append one transition (overwriting the oldest when full)."""
        i, d = self._slot(), self.data
        d["s"][i], d["a"][i], d["s2"][i], d["r"][i], d["done"][i], d["bonus"][i] = s, a, s2, r, done, bonus

    def extend(self, rows: list[tuple[int, int, int, float, bool, bool]]) -> None:
        """Append many transitions."""
        for row in rows:
            self.add(*row)


BonusFn = Callable[[np.ndarray], np.ndarray]  # s2 ids (m,) -> extra reward (m,)


def q_update(values: np.ndarray, batch: dict[str, np.ndarray], lr: float, gamma: float,
             bonus_fn: BonusFn | None = None) -> None:
    """One batched Q-learning step on ``values`` (in place).

    target = r [+ bonus_fn(s2) where bonus] + γ·(1 − done)·max_a' Q(s2, a'); every target is
    computed before any write, and a duplicated (s, a) in the batch is written once.
    """
    s, a, s2 = batch["s"], batch["a"], batch["s2"]
    reward = batch["r"].astype(np.float64)
    if bonus_fn is not None:
        mask = batch["bonus"]
        if mask.any():
            reward[mask] += bonus_fn(s2[mask])
    next_v = values[s2].max(axis=1)
    next_v[batch["done"]] = 0.0
    target = reward + gamma * next_v
    current = values[s, a]
    values[s, a] = current + lr * (target - current)


def q_update_sequential(values: np.ndarray, batch: dict[str, np.ndarray], lr: float, gamma: float,
                        bonus_fn: BonusFn | None = None) -> None:
    """``q_update`` applied one transition after another, as the official ``Q_Learning`` does
    (§1.5): each target sees the writes of the transitions before it in the batch."""
    reward = batch["r"].astype(np.float64)
    if bonus_fn is not None:
        mask = batch["bonus"]
        if mask.any():
            reward[mask] += bonus_fn(batch["s2"][mask])
    for s, a, s2, r, done in zip(batch["s"].tolist(), batch["a"].tolist(), batch["s2"].tolist(),
                                 reward.tolist(), batch["done"].tolist()):
        target = r if done else r + gamma * max(values[s2].tolist())
        current = values[s, a]
        values[s, a] = current + lr * (target - current)


class TabularQ:
    """ε-greedy tabular Q-learner with replay and self-imitation buffers (§1.5)."""

    def __init__(self, cfg: QConfig, n_actions: int) -> None:
        self.cfg = cfg
        self.n_actions = n_actions
        self.q = QTable(n_actions, init=cfg.q_init)
        self.replay = TransitionBuffer(cfg.replay_capacity)
        self.sil = TransitionBuffer(cfg.sil_capacity)
        self.epsilon = cfg.epsilon_start
        self.successes = 0
        self.updates = 0
        self._steps = 0
        self._segment: list[tuple[int, int, int, float, bool, bool]] = []
        self._last: tuple[int, int, int, float, bool, bool] | None = None  # for ``replay="online"``

    @property
    def lr(self) -> float:
        """max(lr_min, ε) when the rate follows ε (App. G), else the fixed ``lr_min``."""
        if self.cfg.lr_follows_epsilon:
            return max(self.cfg.lr_min, self.epsilon)
        return self.cfg.lr_min

    def act(self, s: int, rng: np.random.Generator, allowed: np.ndarray | None = None) -> int:
        """ε-greedy action (ε = 1 until ``learning_starts`` transitions are stored); the random one is
        drawn among ``allowed`` when given (``eliminate_undoing``).

        The greedy choice breaks a full tie at random: in a state whose actions all have the
        same value (typically all 0, nothing learned there yet) the learner moves at random
        instead of repeating action 0, which matters once ε has decayed and a skill starts from
        states it has not seen (Sutton & Barto's ε-greedy with random tie-breaking).
        """
        eps = self.epsilon if len(self.replay) >= self.cfg.learning_starts else 1.0
        if rng.random() < eps:
            return random_action(rng, self.n_actions, allowed)
        values = self.q.values
        if s < 0 or s >= values.shape[0]:  # a state this skill has never stored: all values 0
            return int(rng.integers(self.n_actions)) if self.cfg.random_ties else 0
        row = values[s]
        if self.cfg.random_ties and row.min() == row.max():
            return int(rng.integers(self.n_actions))
        return int(row.argmax())

    def greedy(self, s: int) -> int:
        """The frozen greedy action."""
        return self.q.greedy(s)

    def begin_run(self, memory: None = None) -> None:
        """A run of this skill starts (a table has no memory to empty; ``DeepSkill.begin_run``)."""

    def observe(self, s: int, a: int, s2: int, r: float, done: bool, bonus: bool = False) -> None:
        """Store a transition in replay and in the current segment (for SIL)."""
        self.q.ensure(max(s, s2) + 1)
        row = (s, a, s2, r, done, bonus)
        self.replay.add(*row)
        self._segment.append(row)
        self._last = row

    def learn(self, rng: np.random.Generator, bonus_fn: BonusFn | None = None) -> None:
        """The per-step update: one replay batch, plus one SIL batch once SIL is big enough
        (``replay="online"``: one update on the transition just observed)."""
        cfg = self.cfg
        self._steps += 1
        if cfg.replay == "online":
            if self._last is not None:
                batch = {name: np.array([value], dtype) for (name, dtype), value in zip(_FIELDS, self._last)}
                q_update(self.q.values, batch, self.lr, cfg.gamma, bonus_fn)
                self.updates += 1
            return
        if len(self.replay) < cfg.learning_starts or self._steps % cfg.update_every:
            return
        lr = self.lr
        update = q_update if cfg.batch_update == "jacobi" else q_update_sequential
        update(self.q.values, self.replay.sample(rng, cfg.batch_size), lr, cfg.gamma, bonus_fn)
        self.updates += 1
        if cfg.sil_batch_size and len(self.sil) > cfg.sil_batch_size:
            update(self.q.values, self.sil.sample(rng, cfg.sil_batch_size), lr, cfg.gamma, bonus_fn)

    def end_segment(self, keep: bool) -> None:
        """Close the current segment; ``keep`` copies it into the SIL buffer."""
        if keep:
            self.sil.extend(self._segment)
        self._segment = []

    def decay_epsilon(self) -> None:
        """ε *= decay, floored (called on success or per episode, by ``cfg.decay_on``)."""
        self.epsilon = max(self.cfg.epsilon_min, self.epsilon * self.cfg.epsilon_decay)

    def record_run(self, reached: bool) -> None:
        """A run ended; App. G's ε moves on successes alone (``decay_epsilon``), so nothing to keep
        (``DeepSkill.record_run`` keeps the outcomes for ``epsilon_success_window``)."""

    def state_dict(self) -> dict[str, Any]:
        """Q-table, buffers and counters (for ``asg.learning.checkpoint``)."""
        return {"q": self.q.values, "replay": self.replay.state_dict(), "sil": self.sil.state_dict(),
                "epsilon": self.epsilon, "successes": self.successes, "updates": self.updates,
                "steps": self._steps, "segment": list(self._segment)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when it does not fit the config."""
        values = np.asarray(data["q"])
        if values.ndim != 2 or values.shape[1] != self.n_actions or values.dtype != np.float64:
            raise ValueError(f"Q-table of shape {values.shape}, expected (n, {self.n_actions}) float64")
        self.q.values = values
        self.replay.load_state_dict(data["replay"])
        self.sil.load_state_dict(data["sil"])
        self.epsilon, self.successes = float(data["epsilon"]), int(data["successes"])
        self.updates, self._steps = int(data["updates"]), int(data["steps"])
        self._segment = [tuple(row) for row in data["segment"]]
