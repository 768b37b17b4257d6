"""Initial-state distributions of the Fetch block world (AlphaNPI-X, Appendix D.1).

Training distribution: the *focus* block (the one in the first observation slot, i.e. the
block the program moves) starts in the gripper with probability 0.2, on the table right under
the gripper with 0.4, and elsewhere on the table with 0.4. The other blocks are then placed in
a random order: each goes on top of an already placed tower with probability 0.4, otherwise on
the table, sampled uniformly until it collides with nothing. ``annealed(progress)`` scales the
three probabilities by ``1 - progress``; at progress 1 every block starts at a random free
place on the table, which is the evaluation distribution ``TABLE``.

The gripper start is randomised too (the paper: "initial block positions on the table as well
as gripper position are randomized"). Only numpy here; the env turns a layout into a state.

*Chained starts* (ours, ``p_chained``): programs called one after another start where the last
one left the world: a tower two or three high, a zone with a block already in it. D.1's
distribution rarely shows these, and a policy trained on it fails there (a Stack onto a tower
of three: 0.10). With probability ``p_chained`` the env draws a table layout and moves it with
the exact model's Θ through the calls that set up the episode's program as the non-atomic
programs do (``goal_setter.setting_calls``; 1..``max_chain`` random calls when the episode has
no program), each placement off by up to ``chain_jitter`` in x and y as a real one is.
Annealing leaves ``p_chained`` alone: the meta-controller chains programs at evaluation time too.

*Hand-offs* (ours, ``chain_handoff``): with this probability a chained start leaves the fingers
closed on the block the last call placed, the gripper at its centre. That is where a learned
program ends: the goal is the blocks' positions, and a block held at its target reaches it, so
nothing asks the goal policy to let go, and the next program starts beside or holding that block.
Table 2's ``learned`` policy stacked onto the block its own Move_To_Zone had just placed 2 times in 52,
against 51 in 60 after a scripted release, and held the block at 19 of those 52 hand-offs
(``benchmarks/fetch_handoff.py``, ``expert_free/goal-policy-c/handoff_30.json``). Θ's chain releases
every block, so without hand-offs the policy never trains on the state the next program starts from.

*Placing starts* (ours, ``chain_place``): with this probability a chained start for a program ends
with the program's own block held in the closed fingers ``place_height`` above its target (and up
to ``chain_jitter`` off in x and y), the end of a carry that has yet to set the block down and let
go. A reverse curriculum (Florensa et al., "Reverse Curriculum Generation for Reinforcement
Learning", CoRL 2017): starts near the goal, drawn from the goal itself, no demonstration.
``expert_free/goal-policy-h`` reached the Stack goal test in 0.895 of its episodes and ended most of
them still holding the block 2 to 4 cm above the tower (``docs/fetch_programs.md``): the last
centimetres and the release are what the sparse reward rarely shows it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from asg.envs.fetch.layout import (
    BLOCK_HALF,
    BLOCK_REGION_CENTRE,
    BLOCK_REGION_HALF,
    BLOCK_SIZE,
    MIN_SEPARATION,
    N_BLOCKS,
    REST_Z,
)

GRIPPER_CLEARANCE = MIN_SEPARATION  # no other block starts this close (Chebyshev) to the gripper
MAX_TRIES = 1000


class LayoutError(RuntimeError):
    """No collision-free layout was found (the sampler's constraints are too tight)."""


@dataclass(frozen=True)
class InitialStateConfig:
    """Probabilities of Appendix D.1 and the gripper randomisation."""

    p_in_gripper: float = 0.2
    """Focus block starts grasped."""
    p_under_gripper: float = 0.4
    """Focus block starts on the table right under the gripper."""
    p_stacked: float = 0.4
    """Each other block starts on top of an existing tower."""
    gripper_range: float = 0.1
    """Half-width of the square (around the home position) the gripper starts in."""
    gripper_z: tuple[float, float] = (0.47, 0.60)
    """Range of the gripper's start height (the table top is at 0.4)."""
    p_chained: float = 0.0
    """A start is a table layout moved through 1..max_chain programs by Θ (ours; see module doc)."""
    max_chain: int = 3
    """Most random calls before a chained start of an episode without a program."""
    chain_jitter: float = 0.01
    """Half-width of the uniform x-y error of every placement in a chained start."""
    chain_handoff: float = 0.0
    """A chained start keeps the last placed block in the closed fingers (ours; see module doc)."""
    chain_place: float = 0.0
    """A chained start for a program holds its block above its target (ours; see module doc)."""
    place_family: str | None = None
    """Only programs of this family (``Stack`` or ``Move_To_Zone``) get placing starts; None: every program."""
    place_height: tuple[float, float] = (0.025, 0.05)
    """Range of the held block's height above its target in a placing start (m): lower, the labeler
    already calls the block placed and the program's φ fails (the draw is rejected)."""
    tower_weights: tuple[float, float, float] | None = None
    """How often a chained start of a Stack puts its block onto a tower of 1, 2, 3 blocks (relative
    weights); None: equally often (ours; Stack_All_Blocks needs all three in turn)."""
    chain_other_zone: float = 0.0
    """A chained start of a program first puts the blocks its setting leaves unused into the other
    zone (``goal_setter.setting_calls``): the other colour's half of Clean_And_Stack and Clean_Table
    (ours)."""

    def __post_init__(self) -> None:
        for name in ("p_in_gripper", "p_under_gripper", "p_stacked", "p_chained", "chain_handoff", "chain_place",
                     "chain_other_zone"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a probability, got {getattr(self, name)}")
        if self.p_in_gripper + self.p_under_gripper > 1.0:
            raise ValueError("p_in_gripper + p_under_gripper must not exceed 1")
        if self.gripper_range < 0 or self.gripper_z[0] > self.gripper_z[1]:
            raise ValueError("gripper_range must be >= 0 and gripper_z an increasing pair")
        if self.place_family not in (None, "Stack", "Move_To_Zone"):
            raise ValueError(f"place_family must be None, 'Stack' or 'Move_To_Zone', got {self.place_family!r}")
        if not 0.0 <= self.place_height[0] <= self.place_height[1]:
            raise ValueError("place_height must be an increasing pair of heights >= 0")
        if self.tower_weights is not None and (len(self.tower_weights) != 3 or min(self.tower_weights) < 0.0
                                               or sum(self.tower_weights) <= 0.0):
            raise ValueError(f"tower_weights must be three weights >= 0 with a positive sum, got {self.tower_weights}")
        if self.max_chain < 1 or not 0.0 <= self.chain_jitter < BLOCK_HALF:
            raise ValueError("max_chain must be >= 1 and chain_jitter in [0, BLOCK_HALF)")

    def annealed(self, progress: float) -> InitialStateConfig:
        """The distribution at training ``progress`` in [0, 1]: D.1's probabilities times (1 - progress)."""
        if not 0.0 <= progress <= 1.0:
            raise ValueError(f"progress must be in [0, 1], got {progress}")
        keep = 1.0 - progress
        return replace(self, p_in_gripper=self.p_in_gripper * keep,
                       p_under_gripper=self.p_under_gripper * keep, p_stacked=self.p_stacked * keep)


TRAINING = InitialStateConfig()
TABLE = InitialStateConfig(p_in_gripper=0.0, p_under_gripper=0.0, p_stacked=0.0)


@dataclass(frozen=True)
class Layout:
    """Where everything starts: gripper target (3,), block centres (4, 3), the held block."""

    gripper: np.ndarray
    blocks: np.ndarray
    held: int | None


def sample_layout(rng: np.random.Generator, config: InitialStateConfig, home: np.ndarray,
                  focus: int = 0) -> Layout:
    """Draw one initial layout; ``home`` is the gripper's home position, ``focus`` the first block."""
    if not 0 <= focus < N_BLOCKS:
        raise ValueError(f"focus must be a block index, got {focus}")
    home = np.asarray(home, dtype=float)
    gripper = np.array([*(home[:2] + rng.uniform(-config.gripper_range, config.gripper_range, 2)),
                        rng.uniform(*config.gripper_z)])
    blocks = np.zeros((N_BLOCKS, 3))
    towers: list[list[int]] = []  # bottom-to-top block indices of each table tower
    held = None
    u = rng.uniform()
    if u < config.p_in_gripper:
        held = focus
        blocks[focus] = gripper
    elif u < config.p_in_gripper + config.p_under_gripper:
        blocks[focus] = [gripper[0], gripper[1], REST_Z]
        towers.append([focus])
    else:
        blocks[focus] = _free_table_spot(rng, blocks, towers, gripper, avoid_gripper=False)
        towers.append([focus])
    others = [b for b in range(N_BLOCKS) if b != focus]
    for b in rng.permutation(others):
        b = int(b)
        open_towers = [t for t in towers if _chebyshev(blocks[t[0]], gripper) >= GRIPPER_CLEARANCE]
        if open_towers and rng.uniform() < config.p_stacked:
            tower = open_towers[int(rng.integers(len(open_towers)))]
            blocks[b] = blocks[tower[-1]] + np.array([0.0, 0.0, BLOCK_SIZE])
            tower.append(b)
        else:
            blocks[b] = _free_table_spot(rng, blocks, towers, gripper, avoid_gripper=True)
            towers.append([b])
    return Layout(gripper, blocks, held)


def clear_gripper(gripper: np.ndarray, blocks: np.ndarray, margin: float = 0.05) -> np.ndarray:
    """``gripper`` raised, if need be, to ``margin`` above the top of any block close under it."""
    near = [b for b in blocks if _chebyshev(b, gripper) < GRIPPER_CLEARANCE]
    if not near:
        return gripper
    top = max(float(b[2]) for b in near) + BLOCK_HALF + margin
    return np.array([gripper[0], gripper[1], max(float(gripper[2]), top)])


def _free_table_spot(rng: np.random.Generator, blocks: np.ndarray, towers: list[list[int]],
                     gripper: np.ndarray, avoid_gripper: bool) -> np.ndarray:
    bases = [blocks[t[0]] for t in towers]
    centre = np.asarray(BLOCK_REGION_CENTRE)
    for _ in range(MAX_TRIES):
        xy = centre + rng.uniform(-BLOCK_REGION_HALF, BLOCK_REGION_HALF, 2)
        spot = np.array([xy[0], xy[1], REST_Z])
        if all(_chebyshev(spot, base) >= MIN_SEPARATION for base in bases) and (
                not avoid_gripper or _chebyshev(spot, gripper) >= GRIPPER_CLEARANCE):
            return spot
    raise LayoutError(f"no free table spot after {MAX_TRIES} tries")


def _chebyshev(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a)[:2] - np.asarray(b)[:2])))
