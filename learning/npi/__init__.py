"""AlphaNPI-X meta-controller: recursive MCTS over programs, trained in a model of their effects.

Modules, in data-flow order: ``config`` (hyper-parameters, Table 5), ``table`` (a program library
as index arrays and masks), ``models`` (exact, learned and real-env models), ``network`` (the
AlphaNPI net and its BPTT loss), ``mcts`` (the recursive search), ``landmark_guidance``
(landmark-biased search, ours), ``selfplay`` (episodes, process pool or Ray actors), ``trainer`` (Algorithm 4),
``inference`` (network / plan / replan, Section 4.2), ``pipeline`` (CLI entry points).
"""
from __future__ import annotations

from asg.learning.npi.config import NetConfig, NPIConfig, SearchConfig

__all__ = ["NPIConfig", "NetConfig", "SearchConfig"]
