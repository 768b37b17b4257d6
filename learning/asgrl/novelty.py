"""Count-based exploration for skills (ours): over the labeler's reading of a state
(``HierarchicalConfig.label_novelty``), or over the skills' own state (``state_novelty``).

A skill whose landmark lies behind a mechanism the model leaves out must find the whole mechanism by
ε-greedy steps (docs/asgrl.md, "ASGRL on them, first seeds": UnlockToUnlock's first skill succeeded in
2 of 478 episodes). The labeler often names the steps on the way (a key taken, a door open) even where
the model does not. With ``label_novelty`` β > 0 every training step of a skill of subgoal g also pays

    β / sqrt(n(g, L))

where L is the set of atoms the labeler finds true after the step and n(g, L) counts the training
steps of g's skills that ended in L, this one included. That is the bonus of count-based exploration
(Strehl & Littman 2008, MBIE-EB's β/√n), counted on a coarse hash of the state as Tang et al. 2017
(#Exploration) count on SimHash codes; here the hash is the labeler's vocabulary, a reading the
user wrote. A new combination of atoms pays β on its first visit, one seen a hundred times β/10.
The counts are per subgoal, as the skills are, and belong to the run (checkpointed, resumed).
Greedy evaluation episodes neither count nor pay.

``state_novelty`` β > 0 counts the same way on the skills' own state after the step, the observation
as the learner reads it, in place of the labeler's atoms: n(g, c), c a code of that state. A landmark
whose skills must first find something the labeler has no atom for (the door on KeyInBox: no atom
changes on the way to it) gets no help from the labeler's counts; an unseen view pays β. The code is
the state itself (``state_novelty_bits`` 0: a Q table's id, or an 8-byte hash of a deep skill's
encoded observation, which repeats on a grid's egocentric view), or SimHash (``state_novelty_bits``
k > 0: the signs of k fixed Gaussian projections of the encoded observation less its mean, Charikar
2002, as Tang et al. 2017 count images that never repeat exactly).
"""
from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from asg.planning.task import Atom


class LabelNovelty:
    """Visit counts of (subgoal, true atoms) over a run's training steps, and each visit's bonus."""

    def __init__(self, beta: float) -> None:
        self.beta = beta
        self.counts: dict[tuple[int, frozenset[Atom]], int] = {}

    def bonus(self, subgoal: int, labels: frozenset[Atom]) -> float:
        """Count one training step of ``subgoal``'s skills that ended in ``labels``; its bonus."""
        key = (subgoal, labels)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        return self.beta / math.sqrt(n)

    def state_dict(self) -> dict[str, Any]:
        """The counts as data: per entry its subgoal, its atoms (sorted strings) and its count."""
        entries = sorted((g, sorted(str(a) for a in labels), n) for (g, labels), n in self.counts.items())
        return {"subgoal": [g for g, _, _ in entries], "atoms": [atoms for _, atoms, _ in entries],
                "count": [n for _, _, n in entries]}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        self.counts = {(int(g), frozenset(Atom.parse(a) for a in atoms)): int(n)
                       for g, atoms, n in zip(data["subgoal"], data["atoms"], data["count"])}


class StateNovelty:
    """Visit counts of (subgoal, code of the skills' state) over a run's training steps, and each
    visit's bonus β/√n (``HierarchicalConfig.state_novelty``; see the module's docstring)."""

    SIMHASH_SEED = 0x5EED  # the projections are fixed, the same in every run and after a resume

    def __init__(self, beta: float, bits: int = 0) -> None:
        self.beta, self.bits = beta, bits
        self.counts: dict[tuple[int, int], int] = {}
        self._projection: np.ndarray | None = None

    def code(self, state: Any) -> int:
        """The state's code: a table id as it is, an encoded observation by an 8-byte hash of its
        bytes, or (``bits`` > 0) by the signs of its SimHash projections."""
        if not isinstance(state, np.ndarray):
            return int(state)
        if not self.bits:
            return int.from_bytes(hashlib.blake2b(state.tobytes(), digest_size=8).digest(), "little", signed=True)
        x = state.astype(np.float32).ravel()
        x -= x.mean()  # centred: of non-negative codes or pixels, the mean alone would set most signs
        if self._projection is None or self._projection.shape[1] != x.size:
            rng = np.random.default_rng([self.SIMHASH_SEED, x.size])
            self._projection = rng.standard_normal((self.bits, x.size)).astype(np.float32)
        signs = (self._projection @ x) > 0
        return int.from_bytes(np.packbits(signs).tobytes(), "little") - (1 << 63 if self.bits == 64 else 0)

    def bonus(self, subgoal: int, state: Any) -> float:
        """Count one training step of ``subgoal``'s skills that ended in ``state``; its bonus."""
        key = (subgoal, self.code(state))
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        return self.beta / math.sqrt(n)

    def state_dict(self) -> dict[str, Any]:
        """The counts as three int64 arrays (subgoal, code, count), sorted, and the code's width."""
        keys = sorted(self.counts)
        return {"bits": self.bits, "subgoal": np.array([g for g, _ in keys], dtype=np.int64),
                "code": np.array([c for _, c in keys], dtype=np.int64),
                "count": np.array([self.counts[k] for k in keys], dtype=np.int64)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when its codes are of another width."""
        if int(data["bits"]) != self.bits:
            raise ValueError(f"state_novelty_bits {int(data['bits'])} in the checkpoint, {self.bits} in the config")
        self.counts = {(int(g), int(c)): int(n) for g, c, n in zip(data["subgoal"], data["code"], data["count"])}
