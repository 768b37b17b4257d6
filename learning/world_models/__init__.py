"""Models of what a Fetch program does, for the AlphaNPI-X meta-controller to plan in.

``program_models`` holds the interface the search uses (exact Θ, learned, and the real MuJoCo
world behind one protocol); ``behaviour_model`` is the learned self-behavioural model Ω_w
(Algorithm 3): data collection from the goal policy, the network, training and its evaluation
against the exact model. The exact model itself is the env's (``asg.envs.fetch``).
"""
