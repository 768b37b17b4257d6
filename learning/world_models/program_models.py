"""Environment models the meta-controller searches in: exact symbolic, learned, real env.

An :class:`EnvironmentModel` gives the search a start state, the true atoms of a state and the
state an atomic program leads to. States are float vectors (what the network encodes):

- :class:`AtomWorld` works for any program library: the state is one bit per fluent atom and an
  atomic program applies its ψ (adds and deletes). Tests and small libraries use it.
- :class:`FetchModel` is the Fetch world's 70-d state with a behaviour model Ω(s, i):
  :func:`exact_fetch_model` uses the exact symbolic Ω of ``envs/fetch/behaviour_model.py``;
  :func:`learned_fetch_model` wraps the learned self-behavioural model Ω_w (issue 6), any object
  with ``predict(obs, program) -> obs`` (or ``(obs, applicable)``).
- :class:`RealFetchModel` runs the program in MuJoCo with a controller, restoring the saved
  simulation state of each searched state: exact but slow, so for evaluation only.

Start states of the Fetch models are drawn as in Appendix D.1 without physics: ``table`` puts
every block at a random free spot on the table (the evaluation distribution), ``stacked`` also
starts towers with probability 0.4.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from asg.envs.fetch import (
    BLOCK_POS,
    BLOCK_REL_POS,
    FINGER_POS,
    GRIP_POS,
    OBS_DIM,
    TABLE,
    ExactBehaviourModel,
    FetchBlocksEnv,
    InitialStateConfig,
    LayoutError,
    ScriptedConfig,
    ScriptedController,
    acting_block,
    program_goal,
    run_atomic,
    sample_layout,
    state_atoms,
    state_with_blocks,
)
from asg.learning.errors import ConfigError
from asg.learning.npi.table import ProgramTable, program_table
from asg.planning.programs import ProgramLibrary, fetch_library
from asg.planning.task import Atom

NO_SUCCESS_HEAD = ("search.success_weighting needs a learned behaviour model with a success head "
                   "(the learned world model, fitted with behaviour.success_head true)")

# Simulation().home_grip: the grip site at the arm's home pose (tests/test_npi_mcts.py checks it).
HOME_GRIP = np.array([1.3419337, 0.74910104, 0.53473238])


class EnvironmentModel(Protocol):
    """What the search needs from a world model."""

    name: str
    table: ProgramTable
    state_dim: int

    def atoms(self, state: np.ndarray) -> frozenset[Atom]:
        """The true atoms of ``state``."""

    def step(self, state: np.ndarray, program: int) -> np.ndarray:
        """The state after atomic program ``program`` (its φ holds in ``state``)."""

    def initial_state(self, rng: np.random.Generator) -> np.ndarray:
        """A start state of an episode."""


class AtomWorld:
    """The exact symbolic model of any program library: one bit per fluent atom."""

    name = "exact"

    def __init__(self, library: ProgramLibrary,
                 initial: Callable[[np.random.Generator], frozenset[Atom]] | None = None) -> None:
        self.table = program_table(library)
        mentioned = {a for p in library for a in p.pre.atoms() | p.post.atoms()}
        self.fluents: tuple[Atom, ...] = tuple(sorted(mentioned | set(library.init), key=str))
        self.position = {a: i for i, a in enumerate(self.fluents)}
        self.state_dim = len(self.fluents)
        self._initial = initial or (lambda rng: library.init)
        self._effects = {}
        for i, p in enumerate(self.table.programs):
            if p.atomic:
                (clause,) = p.post.clauses
                self._effects[i] = (clause.pos, clause.neg)

    def encode(self, atoms: frozenset[Atom]) -> np.ndarray:
        """The state vector of a set of atoms (atoms outside the fluents are dropped)."""
        out = np.zeros(self.state_dim)
        for atom in atoms:
            if atom in self.position:
                out[self.position[atom]] = 1.0
        return out

    def atoms(self, state: np.ndarray) -> frozenset[Atom]:
        return frozenset(self.fluents[i] for i in np.flatnonzero(np.asarray(state) > 0.5))

    def step(self, state: np.ndarray, program: int) -> np.ndarray:
        adds, dels = self._effects[program]
        return self.encode((self.atoms(state) - dels) | adds)

    def initial_state(self, rng: np.random.Generator) -> np.ndarray:
        return self.encode(frozenset(self._initial(rng)))


class BehaviourPredictor(Protocol):
    """Ω(s, i): the exact model, or the learned self-behavioural model of issue 6."""

    def predict(self, obs: np.ndarray, program: str | int) -> Any:
        """The 70-d state after atomic program ``program``: an array or ``(array, applicable)``."""


class FetchModel:
    """The Fetch world's 70-d states with a behaviour model Ω inside."""

    state_dim = 70
    state_views = {"blocks": np.arange(BLOCK_POS.start, BLOCK_POS.stop)}  # net.state_view's choices

    def __init__(self, predictor: BehaviourPredictor, name: str, initial_states: str = "table") -> None:
        starts = {"table": TABLE, "stacked": InitialStateConfig(p_in_gripper=0.0)}
        if initial_states not in starts:
            raise ValueError(f"initial_states must be one of {sorted(starts)}, got {initial_states!r}")
        self.predictor, self.name = predictor, name
        self._exact = type(predictor) is ExactBehaviourModel
        self.start_config = starts[initial_states]
        self.table = program_table(fetch_library())

    def atoms(self, state: np.ndarray) -> frozenset[Atom]:
        return state_atoms(state)

    def step(self, state: np.ndarray, program: int) -> np.ndarray:
        name = self.table.programs[program].name
        if self._exact:
            # ExactBehaviourModel.predict minus its φ check, which the search's masks already made.
            goal = program_goal(state, name).reshape(4, 3)
            return state_with_blocks(state, goal, acting_block(name))
        out = self.predictor.predict(state, name)
        return np.asarray(out[0] if isinstance(out, tuple) else out, dtype=float)

    @property
    def gives_success(self) -> bool:
        """Whether :meth:`success_probability` can answer: a learned model fitted with a success head."""
        return getattr(self.predictor, "success", None) is not None

    def success_probability(self, state: np.ndarray, program: int) -> float:
        """P(the atomic ``program`` reaches its ψ from ``state``): the learned model's success head
        (``BehaviourConfig.success_head``). No φ check: the search expands only calls its masks allow."""
        if not self.gives_success:
            raise ConfigError(NO_SUCCESS_HEAD)
        index = self.predictor.programs.index(self.table.programs[program].name)
        return float(self.predictor.success_batch(np.asarray(state)[None], np.array([index]))[0])

    def initial_state(self, rng: np.random.Generator) -> np.ndarray:
        for _ in range(100):  # a crowded draw can find no free spot; draw again
            try:
                layout = sample_layout(rng, self.start_config, HOME_GRIP, focus=int(rng.integers(4)))
            except LayoutError:
                continue
            return synthetic_state(layout.blocks, layout.gripper)
        raise LayoutError("no collision-free start layout in 100 draws")


def synthetic_state(blocks: np.ndarray, gripper: np.ndarray) -> np.ndarray:
    """A resting 70-d Fetch state: blocks (4, 3) upright and still, fingers open, nothing held."""
    blocks = np.asarray(blocks, dtype=float).reshape(4, 3)
    gripper = np.asarray(gripper, dtype=float)
    obs = np.zeros(OBS_DIM)
    obs[BLOCK_POS] = blocks.ravel()
    obs[GRIP_POS] = gripper
    obs[FINGER_POS] = ScriptedConfig.finger_open  # where the scripted controller leaves the fingers
    obs[BLOCK_REL_POS] = (blocks - gripper).ravel()
    return obs


def exact_fetch_model(initial_states: str = "table") -> FetchModel:
    """The Fetch world with the exact symbolic behaviour model (issue 5)."""
    return FetchModel(ExactBehaviourModel(), "exact", initial_states)


def learned_fetch_model(predictor: BehaviourPredictor, initial_states: str = "table") -> FetchModel:
    """The Fetch world with a learned self-behavioural model Ω_w."""
    if not callable(getattr(predictor, "predict", None)):
        raise TypeError("a learned behaviour model needs a predict(obs, program) method")
    return FetchModel(predictor, "learned", initial_states)


class RealFetchModel:
    """MuJoCo as the model: each step restores the state's simulation and runs the controller.

    Only states this object produced can be stepped (their simulation states are kept).
    """

    name = "real"
    state_dim = 70

    def __init__(self, env: Any = None, controller: Any = None) -> None:
        self.env = env if env is not None else FetchBlocksEnv(initial_state="table", max_steps=None)
        self.controller = controller if controller is not None else ScriptedController()
        self.table = program_table(fetch_library())
        self._sim: dict[bytes, Any] = {}

    def atoms(self, state: np.ndarray) -> frozenset[Atom]:
        return state_atoms(state)

    def _remember(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=float).copy()
        self._sim[obs.tobytes()] = self.env.sim.get_state()
        return obs

    def step(self, state: np.ndarray, program: int) -> np.ndarray:
        key = np.asarray(state, dtype=float).tobytes()
        if key not in self._sim:
            raise KeyError("RealFetchModel can only step states it produced")
        self.env.sim.set_state(self._sim[key])
        run = run_atomic(self.env, self.table.programs[program].name, self.controller)
        return self._remember(run.final)

    def initial_state(self, rng: np.random.Generator) -> np.ndarray:
        obs, _ = self.env.reset(seed=int(rng.integers(2**31)))
        return self._remember(obs["observation"])
