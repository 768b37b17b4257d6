"""Count-based exploration over the labeler's reading of a state (``HierarchicalConfig.label_novelty``; ours).

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
"""
from __future__ import annotations

import math
from typing import Any

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
