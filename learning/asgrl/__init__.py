"""ASGRL (Liu et al.): k diverse skills per landmark of an approximate model, a meta-controller, and
the paper's baselines, all tabular over a hashable env state.

Modules, in data-flow order: ``subgoals`` (landmarks or a plan -> subgoals, the labeler
protocol), ``config`` (one typed config per method, Appendix G; presets ``asg`` and ``paper``),
``tabular_q`` (the Q tables and their replay), ``diversity`` (the log p(z|s) bonus and the
curriculum's Bayes estimate), ``clustering`` (Appendix D's landmark-state clusters),
``meta_controller`` (the Q-learner over skills), ``hierarchical`` (ASGRL, Plan-HRL,
Landmark-HRL), ``baselines`` (Goal-Q-Learning, Landmark-Shaping), ``episode`` (the learner
protocol), ``trainer`` (the run loop: run folder, checkpoints, evaluation), ``evaluation``
(curves), ``experiments`` (method x seed grids: ``asg compare``, Figure 3).
"""
