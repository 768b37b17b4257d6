"""Adaptive skill horizons (``HierarchicalConfig.skill_horizon``; ours).

A skill run ends at its landmark or after ``skill_max_steps`` steps (700, the official code's cap,
reference_code.md §1.5). Once a skill has learned its landmark, most of its successful runs take a few
dozen steps; a run still going after many times that is lost in a loop (a greedy policy that walks
back and forth on a partially observed grid), and spends the rest of the episode there: MiniGrid's
UnlockToUnlock ends after 1,080 steps, so one such run of a seven-landmark chain ends the episode
whatever comes after it (docs/asgrl.md, "Adaptive skill horizons").

Here each landmark keeps the step counts of its skills' last ``WINDOW`` successful training runs. Once
it has ``MIN_SUCCESSES`` of them, a run of any of its skills is cut after ``factor`` times their 90th
percentile (never more than ``skill_max_steps``, never fewer than ``MIN_HORIZON`` steps). The cut is a
time limit, not a terminal state: the skill's Q-learning bootstraps through it as through the fixed
cap (Pardo et al. 2018, "Time Limits in Reinforcement Learning"). What happens after a cut run is the
episode's own rule: it ends, or with ``retry_timed_out`` the meta-controller chooses again.

The horizon is a deadline set from the skill's own record of success, as Sutton, Precup & Singh's
(1999) options end by their own termination condition; it is learned online, counts only training
runs, and belongs to the run (checkpointed, resumed).
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

WINDOW = 100  # successful runs per landmark whose step counts set its horizon
MIN_SUCCESSES = 20  # successful runs before a landmark's horizon is set (the fixed cap until then)
QUANTILE = 0.9  # of the step counts of those runs
MIN_HORIZON = 16  # the shortest horizon: a landmark one step away still gets room for a detour


class SkillHorizons:
    """Per landmark: the step counts of its skills' last successful runs, and the horizon they set."""

    def __init__(self, n_subgoals: int, factor: float, max_steps: int) -> None:
        self.factor = float(factor)
        self.max_steps = int(max_steps)
        self.lengths: list[deque[int]] = [deque(maxlen=WINDOW) for _ in range(n_subgoals)]

    def record(self, g: int, steps: int) -> None:
        """A training run of one of subgoal ``g``'s skills reached its landmark in ``steps`` steps."""
        self.lengths[g].append(int(steps))

    def horizon(self, g: int) -> int:
        """The step budget of the next run of a skill of subgoal ``g``."""
        lengths = self.lengths[g]
        if len(lengths) < MIN_SUCCESSES:
            return self.max_steps
        cut = math.ceil(self.factor * float(np.quantile(np.fromiter(lengths, dtype=np.float64), QUANTILE)))
        return min(self.max_steps, max(MIN_HORIZON, cut))

    def state_dict(self) -> dict[str, Any]:
        """The step counts as data, per subgoal in order."""
        return {"lengths": [list(lengths) for lengths in self.lengths]}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        saved = data["lengths"]
        if len(saved) != len(self.lengths):
            raise ValueError(f"skill horizons for {len(saved)} subgoals, the model gives {len(self.lengths)}")
        self.lengths = [deque((int(n) for n in lengths), maxlen=WINDOW) for lengths in saved]
