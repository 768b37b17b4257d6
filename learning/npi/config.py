"""Frozen hyper-parameters of the AlphaNPI-X meta-controller; defaults cite their source.

Sources: AlphaNPI-X (Pierrot et al. 2020, ``shared/papers/000_…``) Table 5 ("T5"), Section 4
and Appendix B ("B.2", "B.3"); the AlphaNPI code as surveyed in
``shared/research/reference_code.md`` §2.2–§2.4 ("§2.x") for what the paper leaves out. Fields
marked "ours" have no published value.

``NPIConfig`` is what a run saves; ``to_dict`` / ``from_dict`` round-trip it through JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from asg.learning import configio
from asg.learning.configio import Checker, show

LANDMARK_MODES = ("off", "prior", "bonus")
CURRICULA = ("random", "learning-progress")
Q_ESTIMATES = ("softmax", "mean")
INITIAL_STATES = ("table", "stacked")
BACKENDS = ("local", "ray")
BUFFER_SCOPES = ("program", "all")
STATE_VIEWS = ("full", "blocks")


@dataclass(frozen=True)
class NetConfig:
    """The AlphaNPI network (B.2, Figure 6) and its optimiser."""

    obs_hidden: int = 128  # observation module hidden layer size (T5)
    obs_encoding: int = 128  # S, observation encoding dimension (T5)
    program_embedding: int = 256  # P, embedding of each non-atomic program (T5)
    lstm_hidden: int = 128  # H, LSTM hidden state dimension (T5)
    head_hidden: int = 64  # policy and value heads 128 -> 64 -> out (§2.2)
    init_range: float = 0.1  # encoder, LSTM and heads initialised uniform in ±0.1 (§2.2)
    lr: float = 1e-4  # Adam learning rate (T5)
    state_view: Literal["full", "blocks"] = "full"  # what f_enc reads: "full", the whole state s_t (B.2);
    # "blocks" (ours), only the blocks' positions (the model's ``state_views``), the part of a state the
    # learned behaviour model predicts closely: a network trained in imagination on the other dimensions
    # (gripper, fingers, block rotations, velocities) meets real states far from every model state there.

    def __post_init__(self) -> None:
        c = Checker(self, "net")
        for name in ("obs_hidden", "obs_encoding", "program_embedding", "lstm_hidden", "head_hidden"):
            c.integer(name, ge=1)
        c.number("init_range", gt=0.0)
        c.number("lr", gt=0.0)
        c.choice("state_view", STATE_VIEWS)


@dataclass(frozen=True)
class SearchConfig:
    """Recursive MCTS over programs (B.2, §2.3)."""

    c_puct: float = 0.5  # P-UCT exploration coefficient (T5)
    c_level: float = 3.0  # level term c_level·exp(-(level(task) - level(callee))) (T5, §2.3)
    gamma: float = 0.97  # a successful Stop after n calls is worth gamma**n (T5)
    failure_value: float = -1.0  # Stop with ψ false, a failed sub-call (§2.3)
    simulations: int = 100  # n_simu while exploring (T5)
    simulations_exploit: int = 5  # n_simu-exploit (T5)
    sub_simulations: int = 5  # the fresh search of a non-atomic call runs in exploit mode (§2.3)
    temperature: float = 1.3  # τ, an exponent on visit counts: π ∝ N**τ (§2.3)
    dirichlet_eps: float = 0.25  # ε_d, noise fraction while exploring (T5)
    dirichlet_alpha: float = 0.03  # α_d (T5)
    max_calls: int = 6  # calls one program may make before only Stop is legal (ours; §2.3: 5 for sorting)
    q_estimate: Literal["softmax", "mean"] = "softmax"  # Q = softmax(values)-weighted mean (§2.3) or mean
    landmark: Literal["off", "prior", "bonus"] = "off"  # landmark guidance (ours, landmark_guidance.py)
    landmark_weight: float = 0.5  # λ of the prior mix, or the coefficient of the bonus term (ours)
    psi_prunings: bool = True  # ours: once ψ holds only Stop is legal, a callee whose ψ holds is not
    # callable (table.py). Off: the paper's masks (calls list, φ, max_calls); the network learns Stop.
    stop_at_expansion: bool = False  # ours: a node's Stop child is scored when the node is expanded (ψ ->
    # gamma**calls, else failure_value) and counted as one visit, so every search compares stopping now
    # with calling on from its first simulation. Off (§2.3, the paper): Stop is scored only when the
    # selection picks it, and an unvisited child's Q is 0. Stop stays the search's and the network's
    # choice either way (nothing is masked); the network learns it from the visit counts.
    success_weighting: bool = False  # ours: a successful Stop is worth gamma**calls times the product of the
    # success probabilities of the atomic calls on its path from the search's root, read from the learned
    # behaviour model's success head (BehaviourConfig.success_head), so the search prefers the plan most
    # likely to succeed, not any plan the deterministic model says succeeds. Off (the paper): every call
    # succeeds as the model predicts it.
    retry_noise: float = 0.0  # ours: in the real world, an atomic call that comes right after a failed call
    # of the same program runs the goal policy with Gaussian action noise of this std (clipped to the
    # action box, as the DDPG behaviour policy's noise_eps, Plappert et al. 2018), so a retry does not
    # repeat the greedy policy's failure to the millimetre. 0 (the paper): every call is greedy.
    level_max_calls: tuple[tuple[int, int], ...] = ()  # (level, limit) pairs: the call limit of the programs
    # of that level, as the reference code's max depth per level (§2.3, sorting {1: 5, 2: 2L+3, 3: 2L+3});
    # a level not listed, and every level with (), keeps max_calls. The paper gives no limit at all.

    def __post_init__(self) -> None:
        c = Checker(self, "search")
        c.number("c_puct", ge=0.0)
        c.number("c_level", ge=0.0)
        c.number("gamma", gt=0.0, le=1.0)
        c.number("failure_value", lt=0.0)
        for name in ("simulations", "simulations_exploit", "sub_simulations", "max_calls"):
            c.integer(name, ge=1)
        c.number("temperature", gt=0.0)
        c.number("dirichlet_eps", ge=0.0, le=1.0)
        c.number("dirichlet_alpha", gt=0.0)
        c.choice("q_estimate", Q_ESTIMATES)
        c.choice("landmark", LANDMARK_MODES)
        c.number("landmark_weight", ge=0.0)
        c.flag("psi_prunings")
        c.flag("stop_at_expansion")
        c.flag("success_weighting")
        c.number("retry_noise", ge=0.0)
        self._check_level_max_calls(c)
        c.require(self.landmark != "prior" or self.landmark_weight <= 1.0, "landmark_weight",
                  f"expected a mixing fraction in [0, 1] with landmark \"prior\", got {self.landmark_weight}")

    def _check_level_max_calls(self, c: Checker) -> None:
        pairs = self.level_max_calls
        c.require(isinstance(pairs, tuple), "level_max_calls",
                  f"expected a list of [level, limit] pairs, got {show(pairs)}")
        seen: set[int] = set()
        for i, pair in enumerate(pairs):
            good = (isinstance(pair, tuple) and len(pair) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in pair))
            got = f"[{', '.join(show(x) for x in pair)}]" if isinstance(pair, tuple) else show(pair)
            c.require(good, f"level_max_calls[{i}]", f"expected a [level, limit] pair of ints >= 1, got {got}")
            c.require(pair[0] not in seen, f"level_max_calls[{i}]",
                      f"expected distinct levels, got level {pair[0]} twice")
            seen.add(pair[0])

    def call_limit(self, level: int) -> int:
        """The calls a program of ``level`` may make before only Stop is legal (the one rule for it)."""
        for listed, limit in self.level_max_calls:
            if listed == level:
                return limit
        return self.max_calls


@dataclass(frozen=True)
class NPIConfig:
    """Training the meta-controller in imagination (B.3, Algorithm 4)."""

    net: NetConfig = field(default_factory=NetConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    iterations: int = 700  # n_iteration (T5)
    episodes_per_iteration: int = 20  # n_ep (T5)
    updates_per_episode: int = 2  # n_updates_per_episode (T5)
    batch_size: int = 16  # whole traces per batch, trained with BPTT (T5, B.3)
    buffer_size: int = 100  # n_buf, traces kept (T5): per program or in all, as buffer_scope says
    buffer_scope: Literal["program", "all"] = "program"  # "program": buffer_size traces of each program, a
    # batch draws a program uniformly, then its traces (the reference code splits by task, §2.4); "all": one
    # buffer of buffer_size traces (T5: "maximum size of buffer memory (nb of full trajectories)", B.3: "a
    # centralized replay buffer"). The paper never says whether it splits by program.
    p_buf: float = 0.5  # fraction of a batch drawn from positive-reward traces (T5)
    validation_episodes: int = 10  # n_val per program, exploit mode (T5)
    validate_every: int = 1  # iterations between validations (ours; Algorithm 4 validates each one)
    curriculum: Literal["random", "learning-progress"] = "random"  # program sampling (Section 4.1, B.3)
    lp_epsilon: float = 0.2  # ε of B.3 Eq. 3 (ours: the paper gives none)
    lp_episodes: int = 5  # l of B.3, exploit episodes per program per iteration (ours)
    programs: tuple[str, ...] = ()  # non-atomic programs to train; () = all of the library
    initial_states: Literal["table", "stacked"] = "table"  # start distribution of episodes (D.1; ours)
    stop_at_success: float | None = None  # end once every validated program reaches this (ours)
    workers: int = 1  # self-play processes (the paper: 10 MPI actors, B.3)
    backend: Literal["local", "ray"] = "local"  # local: in-process / fork pool; ray: Ray actors (ours)
    ray_address: str | None = None  # the Ray cluster to join; None: a local Ray instance (ours)
    validate_with_guidance: bool = True  # False: validation searches without landmark guidance (ours)

    def __post_init__(self) -> None:
        c = Checker(self)
        c.require(isinstance(self.net, NetConfig), "net", "expected a NetConfig")
        c.require(isinstance(self.search, SearchConfig), "search", "expected a SearchConfig")
        for name in ("iterations", "episodes_per_iteration", "batch_size", "buffer_size",
                     "validation_episodes", "validate_every", "lp_episodes", "workers"):
            c.integer(name, ge=1)
        c.integer("updates_per_episode", ge=0)
        c.number("p_buf", ge=0.0, le=1.0)
        c.choice("buffer_scope", BUFFER_SCOPES)
        c.choice("curriculum", CURRICULA)
        c.number("lp_epsilon", ge=0.0, le=1.0)
        c.names("programs")
        c.choice("initial_states", INITIAL_STATES)
        c.number("stop_at_success", gt=0.0, le=1.0, optional=True)
        c.choice("backend", BACKENDS)
        c.text("ray_address", optional=True)
        c.require(self.ray_address is None or self.backend == "ray", "ray_address",
                  f"expected null unless backend is \"ray\", got {self.ray_address!r} with backend {self.backend!r}")
        c.flag("validate_with_guidance")


def to_dict(config: NPIConfig) -> dict[str, Any]:
    """A JSON-ready dict of the config (tuples become lists); :func:`from_dict` inverts it."""
    return configio.to_dict(config)


def from_dict(data: Any, where: str = "config") -> NPIConfig:
    """The config from :func:`to_dict` output, or a partial dict over the defaults."""
    return configio.read_config(NPIConfig, data, where)
