"""Frozen hyper-parameters of the goal-conditioned DDPG+HER policy; defaults cite their source.

Sources: AlphaNPI-X (Pierrot et al. 2020, ``shared/papers/000_…``) Table 5 ("T5"), Section 4.1
("4.1"), Appendix B.4 Algorithms 1-2 ("Alg. 1/2"), Appendix D.1 ("D.1"); openai/baselines HER
defaults ("baselines", as listed in ``shared/research/rl_anchors.md`` §2) for what the paper
leaves out; Nair et al. 2018, "Overcoming exploration in RL with demonstrations" ("Nair") for
the demonstration levers. Fields marked "ours" have no published value.

Three presets (:data:`PRESETS`): ``paper`` is the paper's configuration (no demonstrations, the
"final" HER strategy of Section 4.1, Table 5's schedule: 250 epochs of 40 cycles, its 28 actors
emulated in one learner); ``fast`` is what fits in about an hour on two cores, with one actor:
demonstrations from the scripted controller (BC loss with a Q-filter, demo transitions in their
own buffer, resets to demo states), DAgger labels from the queryable expert on every visited
state, the "future" strategy, program goals from the start, 30 % chained starts (a Stack onto
a tower, a Move into a half-full zone: where the meta-controller calls the programs), 100 epochs
and two physics threads. ``learned`` is ``fast`` with the scripted controller and its expert
off everywhere (issue 36): no demonstrations, no demo resets, no DAgger; Table 5's 250 epochs.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from asg.learning import configio
from asg.learning.configio import Checker
from asg.learning.errors import ConfigError

STRATEGIES = ("future", "final")
GOAL_MODES = ("uniform", "programs", "mixed")


@dataclass(frozen=True)
class AgentConfig:
    """Networks, optimisers and the DDPG update."""

    hidden: tuple[int, ...] = (256, 256)  # actor and critic hidden layers (T5: 256/256)
    gamma: float = 0.99  # discount factor (T5)
    lr_actor: float = 1e-3  # (T5)
    lr_critic: float = 1e-3  # (T5)
    batch_size: int = 256  # transitions per update (T5)
    polyak: float = 0.95  # target ← polyak·target + (1 − polyak)·online, once per cycle (baselines)
    action_l2: float = 1.0  # weight of mean(π(s, g)²) in the actor loss (baselines)
    clip_obs: float = 200.0  # raw observations and goals clipped to ±clip_obs (baselines)
    norm_clip: float = 5.0  # normalised inputs clipped to ±norm_clip (baselines)
    norm_eps: float = 0.01  # floor of the normaliser's standard deviation (baselines)
    clip_target: bool = True  # TD targets clipped to [−1/(1 − γ), 0], the sparse return range (baselines)

    def __post_init__(self) -> None:
        c = Checker(self, "agent")
        c.require(isinstance(self.hidden, tuple) and len(self.hidden) >= 1
                  and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in self.hidden),
                  "hidden", f"expected a non-empty list of layer sizes >= 1, got {self.hidden!r}")
        c.number("gamma", gt=0.0, lt=1.0)
        c.number("lr_actor", gt=0.0)
        c.number("lr_critic", gt=0.0)
        c.integer("batch_size", ge=1)
        c.number("polyak", ge=0.0, lt=1.0)
        c.number("action_l2", ge=0.0)
        for name in ("clip_obs", "norm_clip", "norm_eps"):
            c.number(name, gt=0.0)
        c.flag("clip_target")


@dataclass(frozen=True)
class ReplayConfig:
    """Replay buffer and hindsight relabelling."""

    strategy: Literal["future", "final"] = "final"  # HER strategy (4.1: "final")
    replay_k: int = 4  # relabelled : original = k : 1 (T5)
    buffer_size: int = 1_000_000  # transitions (T5)
    state_buffer_size: int = 10_000  # final states kept for no-reset starts (E.1; size ours)

    def __post_init__(self) -> None:
        c = Checker(self, "replay")
        c.choice("strategy", STRATEGIES)
        c.integer("replay_k", ge=0)
        c.integer("buffer_size", ge=1)
        c.integer("state_buffer_size", ge=1)


@dataclass(frozen=True)
class ExploreConfig:
    """Behaviour policy while collecting (test rollouts are greedy)."""

    noise_eps: float = 0.2  # Gaussian action noise, std (baselines)
    random_eps: float = 0.3  # probability of a uniformly random action (baselines)

    def __post_init__(self) -> None:
        c = Checker(self, "explore")
        c.number("noise_eps", ge=0.0)
        c.number("random_eps", ge=0.0, le=1.0)


@dataclass(frozen=True)
class DemoConfig:
    """Demonstrations from the scripted controller (Nair) and DAgger labels from the queryable expert.

    ``episodes = 0`` turns the demonstrations (and the fields up to ``pretrain_steps``) off;
    ``dagger`` works with or without them."""

    episodes: int = 0  # successful demo episodes kept (the paper uses none; Nair: 100)
    bc_weight: float = 1.0  # λ2, weight of the mean behaviour-cloning term of the actor loss (Nair: ≈ 1)
    q_weight: float = 1.0  # λ1, weight of −Q (and the action L2) in the actor loss when demos are on
    #   (Nair: 0.001, so that BC dominates wherever the Q-filter keeps it)
    q_filter: bool = True  # clone a demo action only where Q(s, g, a_demo) > Q(s, g, π(s, g)) (Nair)
    batch_size: int = 64  # demo transitions added to every update batch (Nair: 128 of 1024)
    her: bool = True  # relabel demo transitions too (Nair)
    reset_prob: float = 0.0  # probability an episode starts at a state along a demo (Nair)
    reset_anneal: bool = True  # reset_prob decays linearly to 0 over phase 1 (ours)
    pretrain_steps: int = 0  # behaviour-cloning steps of the actor on the demos before RL starts (ours)
    dagger: bool = False  # label the learner's visited states with the queryable expert and clone them
    #   (DAgger, Ross et al. 2011; ``dagger.py``; ours)
    dagger_size: int = 250_000  # labelled states kept (ring buffer; ours)
    dagger_batch: int = 128  # labelled states in every update (ours)
    dagger_weight: float = 1.0  # weight of their behaviour-cloning term, no Q-filter (ours)

    def __post_init__(self) -> None:
        c = Checker(self, "demos")
        c.integer("episodes", ge=0)
        c.number("bc_weight", ge=0.0)
        c.number("q_weight", gt=0.0)
        c.flag("q_filter")
        c.integer("batch_size", ge=1)
        c.flag("her")
        c.number("reset_prob", ge=0.0, le=1.0)
        c.flag("reset_anneal")
        c.integer("pretrain_steps", ge=0)
        c.flag("dagger")
        c.integer("dagger_size", ge=1)
        c.integer("dagger_batch", ge=1)
        c.number("dagger_weight", ge=0.0)

    @property
    def enabled(self) -> bool:
        return self.episodes > 0


@dataclass(frozen=True)
class ScheduleConfig:
    """Epochs, cycles, episodes and updates (Algorithms 1-2).

    ``actors`` emulates the paper's parallel DDPG actors in this one learner (T5: "n_actors number
    of actors used in parallel 28"; D.2: "We used 28 CPUs to train the goal-conditioned policy").
    Each cycle collects ``episodes_per_cycle`` episodes per actor (:meth:`cycle_episodes`), and
    each update draws ``actors`` times the rows of one actor's batch: ``agent.batch_size`` HER
    transitions, and as many demo rows (``demos.batch_size``) and DAgger labels
    (``demos.dagger_batch``) as one actor would add. Every loss term of ``DDPGAgent.update`` is a
    mean over its rows, so the gradient of the pooled batch is the average of ``actors`` gradients
    of one actor's batch each, what Alg. 1-2 apply ("Compute the gradient on this batch. Update
    weights θ with the gradient averaged over all actors"); demo rows and labels scale too so that
    each emulated actor's batch keeps the configured mix. Where the paper's actors differ: each
    draws its batch from its own buffer ("Sample a batch of transitions in the replay buffer",
    inside each actor's loop; the paper does not say whether the buffer is per actor, and
    openai/baselines' MPI HER keeps one per process); here all actors' episodes share one buffer of
    ``replay.buffer_size`` transitions and one state buffer (Alg. 2: "Store the final state in the
    state buffer"), so the pooled buffer holds the last ``buffer_size`` transitions of all actors
    (about 9 epochs of 2,240 episodes at T5's 1e6) where 28 per-actor buffers of 1e6 would hold
    each actor's whole run. The paper says nothing about input normalisation; one normaliser over
    the pooled episodes gives the statistics baselines' normaliser reaches by averaging its sums and
    counts over the MPI workers (``Allreduce``), not those of 28 unsynchronised per-actor ones.
    """

    epochs_phase1: int = 100  # uniform goals, every episode reset (T5, Alg. 1)
    epochs_phase2: int = 150  # program goals, no-reset starts (T5, Alg. 2)
    cycles: int = 40  # cycles per epoch (T5)
    batches: int = 40  # updates per cycle (T5)
    episodes_per_cycle: int = 2  # episodes per actor (at least per worker) per cycle, the envs a worker steps
    #   together (Alg. 1; baselines 2)
    actors: int = 1  # paper actors emulated in this learner: episodes and update rows × actors (class doc;
    #   T5: 28, the ``paper`` preset's); 1 = one actor, what configs saved before the field ran
    horizon: int = 50  # T, steps of one atomic program (4.1)
    p_reset: float = 0.5  # phase 2: probability of a fresh reset, else a stored final state (Alg. 2)
    phase1_goals: Literal["uniform", "programs", "mixed"] = "uniform"  # goals of phase 1 (Alg. 1)
    p_program_goal: float = 0.5  # share of program goals when phase1_goals = "mixed" (ours)
    anneal_epochs: int | None = None  # epochs to anneal D.1's start distribution to all-on-table;
    #   None = the whole run ("by the end of training", D.1)
    chained_starts: float = 0.0  # share of fresh starts set up as inside a non-atomic program: a Stack
    #   onto a tower, a Move into a half-full zone (``initial_states.py``; ours, not annealed)
    chained_handoff: float = 0.0  # share of chained starts with the last placed block still in the closed
    #   fingers, where a learned program leaves it (``initial_states.py``, "Hand-offs"; ours)
    chained_place: float = 0.0  # share of chained starts (with a program) with its block held in the closed
    #   fingers 2.5-5 cm above its target: a reverse curriculum (Florensa et al. 2017; ``initial_states.py``,
    #   "Placing starts"; ours)
    chained_place_family: Literal["Stack", "Move_To_Zone"] | None = None  # only this family's programs get
    #   placing starts (None: every program; ours)
    chained_jitter: float = 0.01  # half-width (m, under 0.025) of the x-y error of each placement in a chained
    #   start; the learned policy's own Stacks land 0.8 cm off (median), 1.9 cm at the 90th percentile (ours)
    chained_tower_weights: tuple[float, float, float] | None = None  # how often a Stack's chained start puts its
    #   block onto a tower of 1, 2, 3 blocks (relative weights); None: equally often (ours)
    chained_other_zone: float = 0.0  # share of a program's chained starts whose setting first puts the blocks it
    #   leaves unused into the other zone, stacked or side by side: Clean_And_Stack's and Clean_Table's other
    #   colour, done first (``goal_setter.setting_calls``; ours)
    release_height: float | None = None  # reward of a goal that sets the moved block at rest also needs the
    #   gripper this far (m) above the block, or beside it: let go, as the next program needs (ours; None = off)
    goal_z_tolerance: float | None = None  # reward: each block also within this height of its target
    #   (ψ's test: half a block); None = the paper's 5 cm ball alone (ours)
    goal_xy_tolerance: float | None = None  # reward: each block also within this horizontal distance of its
    #   target; 0.02 leaves a zone's other slot free (``goal_setter.goals_reached``); None = the 5 cm ball alone
    #   (ours: the second stage of an accuracy curriculum, Fournier et al. 2018)
    programs: tuple[str, ...] = ()  # atomic programs to train and test on; () = all 20 (ours: debugging,
    #   smoke runs, curricula)
    eval_episodes: int = 10  # greedy test episodes per epoch on program goals (baselines: 10)
    threads: int = 1  # physics threads per worker (mj_step releases the GIL; ours)
    torch_threads: int = 1  # torch.set_num_threads during training (rl_anchors §3)
    checkpoint_every: int = 5  # epochs between checkpoints (ours: a full buffer pickles to ~350 MB)
    snapshot_every: int = 0  # epochs between kept policy snapshots, snapshots/policy_eNNNN.npz, for choosing one
    #   on a held-out suite afterwards (benchmarks/fetch_select_snapshot.py); 0 = none (ours; output only)

    def __post_init__(self) -> None:
        c = Checker(self, "schedule")
        c.integer("epochs_phase1", ge=0)
        c.integer("epochs_phase2", ge=0)
        c.require(self.total_epochs >= 1, "epochs_phase2",
                  "expected at least one epoch in all (epochs_phase1 + epochs_phase2 >= 1), got 0")
        for name in ("cycles", "episodes_per_cycle", "actors", "horizon", "threads", "torch_threads",
                     "checkpoint_every"):
            c.integer(name, ge=1)
        c.integer("batches", ge=0)
        c.integer("eval_episodes", ge=0)
        c.integer("snapshot_every", ge=0)
        c.number("p_reset", ge=0.0, le=1.0)
        c.choice("phase1_goals", GOAL_MODES)
        c.number("p_program_goal", ge=0.0, le=1.0)
        c.integer("anneal_epochs", ge=1, optional=True)
        c.number("chained_starts", ge=0.0, le=1.0)
        c.number("chained_handoff", ge=0.0, le=1.0)
        c.number("chained_place", ge=0.0, le=1.0)
        c.choice("chained_place_family", (None, "Stack", "Move_To_Zone"))
        c.number("chained_other_zone", ge=0.0, le=1.0)
        c.number("chained_jitter", ge=0.0, lt=0.025)  # under half a block (InitialStateConfig)
        weights = self.chained_tower_weights
        c.require(weights is None or (len(weights) == 3 and min(weights) >= 0.0 and sum(weights) > 0.0),
                  "chained_tower_weights", f"expected null or three weights >= 0 with a positive sum, got {weights!r}")
        c.number("goal_z_tolerance", gt=0.0, optional=True)
        c.number("goal_xy_tolerance", gt=0.0, optional=True)
        c.number("release_height", gt=0.0, optional=True)
        c.names("programs")

    @property
    def total_epochs(self) -> int:
        return self.epochs_phase1 + self.epochs_phase2

    def cycle_episodes(self, workers: int = 1) -> int:
        """Episodes of one cycle: ``episodes_per_cycle`` per actor, split over the ``workers``; at least
        ``episodes_per_cycle`` per worker, so ``workers`` > ``actors`` adds episodes but no gradient
        rows, as every run did before ``actors`` existed."""
        return self.episodes_per_cycle * max(self.actors, workers)


@dataclass(frozen=True)
class GoalPolicyConfig:
    """Everything a goal-policy run needs; saved with the run."""

    preset: str = "paper"
    agent: AgentConfig = field(default_factory=AgentConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    explore: ExploreConfig = field(default_factory=ExploreConfig)
    demos: DemoConfig = field(default_factory=DemoConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)

    def __post_init__(self) -> None:
        c = Checker(self)
        c.text("preset")
        for name, cls in (("agent", AgentConfig), ("replay", ReplayConfig), ("explore", ExploreConfig),
                          ("demos", DemoConfig), ("schedule", ScheduleConfig)):
            c.require(isinstance(getattr(self, name), cls), name, f"expected a {cls.__name__}")
        c.require(self.replay.buffer_size >= self.schedule.horizon, "replay.buffer_size",
                  f"expected room for one episode (>= schedule.horizon = {self.schedule.horizon}), "
                  f"got {self.replay.buffer_size}")


PAPER_ACTORS = 28  # T5: "n_actors number of actors used in parallel 28"; E.4: "28 ddpg actors sample 100
#   episodes per epoch in parallel"; D.2: "We used 28 CPUs to train the goal-conditioned policy"


def paper() -> GoalPolicyConfig:
    """The paper's configuration: Table 5 (its 28 actors emulated), the "final" strategy, no demonstrations."""
    return GoalPolicyConfig(preset="paper", schedule=ScheduleConfig(actors=PAPER_ACTORS))


def fast() -> GoalPolicyConfig:
    """About an hour on two cores: demonstrations, DAgger, "future" HER, program goals (see module doc)."""
    return GoalPolicyConfig(
        preset="fast",
        agent=AgentConfig(gamma=0.98),  # 1 − 1/T as in baselines: shorter credit horizon for T = 50
        replay=ReplayConfig(strategy="future"),
        demos=DemoConfig(episodes=200, bc_weight=1.0, q_weight=0.001, batch_size=64, reset_prob=0.2,
                         pretrain_steps=2000, dagger=True),
        schedule=ScheduleConfig(epochs_phase1=40, epochs_phase2=60, episodes_per_cycle=4,
                                phase1_goals="programs", chained_starts=0.3, goal_z_tolerance=0.02,
                                threads=2),
    )


def learned() -> GoalPolicyConfig:
    """``fast`` with every use of the scripted controller and its expert off (issue 36): no
    demonstrations, no BC pre-training, no demo resets, no DAgger. What stays of ``fast`` are the
    additions that are not an expert: "future" HER, γ 0.98, program goals in phase 1, 30 % chained
    starts, the 2 cm height tolerance of the goal test, one actor's data rate (4 episodes a cycle).
    Without an expert the policy learns more slowly (``fast`` without demos and DAgger: 0.31 after
    40 epochs, still rising), so the schedule is Table 5's 100 + 150 epochs; one physics thread
    (speed only: the 2-core machine is shared)."""
    return GoalPolicyConfig(
        preset="learned",
        agent=AgentConfig(gamma=0.98),
        replay=ReplayConfig(strategy="future"),
        demos=DemoConfig(episodes=0, reset_prob=0.0, pretrain_steps=0, dagger=False),
        schedule=ScheduleConfig(epochs_phase1=100, epochs_phase2=150, episodes_per_cycle=4,
                                phase1_goals="programs", chained_starts=0.3, goal_z_tolerance=0.02,
                                threads=1),
    )


PRESETS = {"paper": paper, "fast": fast, "learned": learned}


def uses_expert(config: GoalPolicyConfig) -> bool:
    """Whether a run of ``config`` calls the scripted controller or its expert (demos, demo resets, DAgger)."""
    d = config.demos
    return d.enabled or d.dagger


def preset(name: str) -> GoalPolicyConfig:
    """A preset by name (``paper``, ``fast`` or ``learned``)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name]()


def to_dict(config: GoalPolicyConfig) -> dict[str, Any]:
    """A JSON-ready dict (tuples become lists); :func:`from_dict` inverts it."""
    return configio.to_dict(config)


def from_dict(data: Any, where: str = "config") -> GoalPolicyConfig:
    """The config from :func:`to_dict` output, or a partial dict over the dataclass defaults: the
    ``paper`` preset's but ``schedule.actors`` 1, so that a config saved before that field existed
    reads as what it ran."""
    return configio.read_config(GoalPolicyConfig, data, where)


def with_epochs(config: GoalPolicyConfig, phase1: int, phase2: int) -> GoalPolicyConfig:
    """The same config with another number of epochs in each phase (e.g. to extend a run)."""
    return replace(config, schedule=replace(config.schedule, epochs_phase1=phase1, epochs_phase2=phase2))


def nonatomic_baseline(her: bool) -> GoalPolicyConfig:
    """The model-free baselines of AlphaNPI-X Table 2: m-ddpg (``her=False``) and m-ddpg + HER.

    Table 5 gives one DDPG configuration "for our method together with baselines", so networks,
    γ, batch, learning rates, replay_k, cycles, updates and buffer are the goal policy's (T5).
    The paper gives no baseline schedule: 250 epochs (T5's 100 + 150) of fresh resets, each
    episode a uniformly drawn non-atomic program (Section 5: "m-ddpg selects randomly a program
    index and plays one episode"); T = 200, four atomic programs of 50 steps, as many as the
    longest non-atomic programs run (ours). The one-hot variant has nothing to relabel
    (replay_k 0); the goal-setter variant relabels with the "final" strategy (4.1) and k = 4 (T5).
    ``schedule.actors`` stays 1 (T5's 28 not emulated), as every baseline run so far trained.
    """
    return GoalPolicyConfig(
        preset="nonatomic-her" if her else "nonatomic",
        replay=ReplayConfig(strategy="final", replay_k=4 if her else 0),
        schedule=ScheduleConfig(epochs_phase1=250, epochs_phase2=0, horizon=200, phase1_goals="programs"),
    )
