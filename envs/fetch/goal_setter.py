"""The goal setter Θ(s, i) of AlphaNPI-X (Section 4.1, Appendix C) and program conditions on states.

Θ turns a state and an atomic program into the 12-d goal of desired block positions:

- ``Stack_a_b``: block a goes to ``p_b + (0, 0, 2d)``, right on top of b; the others stay.
- ``Move_To_Zone_b_Z``: block b goes to the first free slot of zone Z at resting height; the
  others stay.

so that the goal reward ``f(s_T, Θ(s_0, i))`` (every block within ε of its target) is the
program's post-condition ψ_i. φ_i and the symbolic ψ_i come from the compiled program library
(``asg.planning.programs``) and are evaluated on the labeler's atoms.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from asg.envs.fetch import labeler
from asg.envs.fetch.layout import BLOCK_SIZE, EPSILON, GOAL_DIM, N_BLOCKS, ZONES, block_index, block_positions
from asg.planning.errors import AsgError
from asg.planning.programs import Program, fetch_library

FAMILIES = ("Stack", "Move_To_Zone")


class NotApplicableError(AsgError):
    """Θ has no goal for this program in this state (its zone has no free slot)."""


class UnknownProgramError(AsgError):
    """A program name or index that is not an atomic program of the library."""


@lru_cache(maxsize=1)
def atomic_programs() -> tuple[str, ...]:
    """Names of the 20 atomic programs, in library (Table 3) order; index = program index."""
    names = tuple(p.name for p in fetch_library().atomic)
    odd = [p.family for p in fetch_library().atomic if p.family not in FAMILIES]
    if odd:
        raise UnknownProgramError(f"the Fetch goal setter knows {FAMILIES}, not {sorted(set(odd))}")
    return names


def atomic_name(program: str | int) -> str:
    """The canonical name of an atomic program given by name (any case) or index."""
    names = atomic_programs()
    if isinstance(program, str) and program in _programs():
        return program
    if isinstance(program, (int, np.integer)):
        if not 0 <= int(program) < len(names):
            raise UnknownProgramError(f"atomic program index must be in 0..{len(names) - 1}, got {program}")
        return names[int(program)]
    for name in names:
        if name.lower() == str(program).lower():
            return name
    raise UnknownProgramError(f"unknown atomic program {program!r}; e.g. {names[0]}, {names[-1]}")


def program(name: str | int) -> Program:
    """The library's :class:`Program` of an atomic program."""
    return _programs()[atomic_name(name)]


@lru_cache(maxsize=1)
def _programs() -> dict[str, Program]:
    return {p.name: p for p in fetch_library().atomic}


def acting_block(name: str | int) -> int:
    """The block an atomic program moves (its first argument)."""
    return block_index(program(name).arguments[0])


def applicable(obs: np.ndarray, name: str | int) -> bool:
    """φ_i: the program's pre-condition holds in the labelled state."""
    return program(name).pre.holds(labeler.atoms(obs))


def applicable_to_positions(positions: np.ndarray, name: str | int) -> bool:
    """φ_i on bare block positions (4, 3); the gripper plays no part in any φ."""
    return program(name).pre.holds(labeler.label_positions(positions).atoms())


def post_holds(obs: np.ndarray, name: str | int) -> bool:
    """Symbolic ψ_i: the program's effect atoms hold in the labelled state."""
    return program(name).post.holds(labeler.atoms(obs))


def goal(obs: np.ndarray, name: str | int) -> np.ndarray:
    """Θ(s, i): the 12-d goal of atomic program ``name`` from state ``obs`` (70-d)."""
    return goal_positions(block_positions(obs), name).reshape(GOAL_DIM)


def goal_positions(positions: np.ndarray, name: str | int) -> np.ndarray:
    """Θ on bare block positions (4, 3): where every block should be after ``name``, (4, 3)."""
    prog = program(name)
    positions = np.array(positions, dtype=float).reshape(-1, 3)
    moved = block_index(prog.arguments[0])
    if prog.family == "Stack":
        positions[moved] = positions[block_index(prog.arguments[1])] + np.array([0.0, 0.0, BLOCK_SIZE])
    else:
        positions[moved] = free_slot(positions, prog.arguments[1], moved)
    return positions


def chain(positions: np.ndarray, names: Sequence[str], rng: np.random.Generator,
          jitter: float = 0.0) -> np.ndarray:
    """Block positions (4, 3) after the programs ``names`` in turn, each applied with Θ where its φ holds.

    Every placement lands up to ``jitter`` off in x and y, as a real one does. This is the exact
    model rolled forward; the env builds chained start states from it (``initial_states.py``).
    """
    positions = np.array(positions, dtype=float).reshape(-1, 3)
    for name in names:
        if not applicable_to_positions(positions, name):
            continue
        positions = goal_positions(positions, name)
        positions[acting_block(name), :2] += rng.uniform(-jitter, jitter, 2)
    return positions


def random_calls(positions: np.ndarray, steps: int, rng: np.random.Generator) -> tuple[str, ...]:
    """``steps`` uniformly drawn programs, each applicable after the ones before it (exact model)."""
    positions, calls = np.array(positions, dtype=float).reshape(-1, 3), []
    for _ in range(steps):
        names = [p for p in atomic_programs() if applicable_to_positions(positions, p)]
        if not names:
            break
        calls.append(names[int(rng.integers(len(names)))])
        positions = goal_positions(positions, calls[-1])
    return tuple(calls)


def setting_calls(name: str | int, rng: np.random.Generator,
                  tower_weights: tuple[float, float, float] | None = None,
                  other_zone: float = 0.0) -> tuple[str, ...]:
    """Calls that set up the situations ``name`` meets inside the non-atomic programs.

    ``Stack_a_b``: b on top of a tower of 0-2 other blocks, its base in a zone half the time
    (Stack_All_Blocks, Stack_All_To_Zone); the three tower sizes equally often, or in the
    proportions ``tower_weights`` (a goes onto a tower of 1, 2, 3 blocks). ``Move_To_Zone_a_Z``: zone
    Z holding 0 or 1 other block, and a on top of another block half the time (Clean_Table,
    Clean_And_Stack).

    With probability ``other_zone`` the blocks those calls leave unused first go into the zone they
    do not use (a random one when they use none), the second on top of the first half the time,
    else beside it: the other colour's half of Clean_And_Stack and Clean_Table, done first. At 0
    the draws are the same as without it.
    """
    prog = program(name)
    a = block_index(prog.arguments[0])
    others = [int(b) for b in rng.permutation(N_BLOCKS) if b != a]
    zones = sorted(ZONES)
    if prog.family == "Stack":
        b = block_index(prog.arguments[1])
        if tower_weights is None:
            n_under = int(rng.integers(3))
        else:
            w = np.asarray(tower_weights, dtype=float)
            n_under = int(rng.choice(3, p=w / w.sum()))
        under = [o for o in others if o != b][:n_under]
        tower = under + [b]
        used_zone = zones[int(rng.integers(2))] if rng.uniform() < 0.5 else None
        calls = [f"Move_To_Zone_{tower[0]}_{used_zone.upper()}"] if used_zone else []
        calls += [f"Stack_{upper}_{lower}" for lower, upper in zip(tower, tower[1:])]
        used = {a, *tower}
    else:
        used_zone = prog.arguments[1]
        used, calls = {a}, []
        if rng.uniform() < 0.5:
            calls.append(f"Move_To_Zone_{others[0]}_{used_zone.upper()}")
            used.add(others[0])
        if rng.uniform() < 0.5:
            calls.append(f"Stack_{a}_{others[1]}")
            used.add(others[1])
    if other_zone > 0.0 and rng.uniform() < other_zone:
        calls = _other_zone_calls([o for o in others if o not in used], used_zone, rng) + calls
    return tuple(calls)


def _other_zone_calls(spare: list[int], used_zone: str | None, rng: np.random.Generator) -> list[str]:
    """Calls putting the ``spare`` blocks into the zone other than ``used_zone``: the first moved
    there, the second stacked on it or moved beside it, equally often."""
    if not spare:
        return []
    zones = sorted(ZONES)
    zone = (zones[int(rng.integers(2))] if used_zone is None else
            next(z for z in zones if z != used_zone)).upper()
    calls = [f"Move_To_Zone_{spare[0]}_{zone}"]
    if len(spare) > 1:
        calls.append(f"Stack_{spare[1]}_{spare[0]}" if rng.uniform() < 0.5 else f"Move_To_Zone_{spare[1]}_{zone}")
    return calls


def free_slot(positions: np.ndarray, zone: str, moved: int) -> np.ndarray:
    """Centre of the first slot of ``zone`` not taken by a block other than ``moved``."""
    taken = labeler.slot_occupancy(positions, zone, exclude=moved)
    for slot, busy in zip(ZONES[zone].slots(), taken):
        if not busy:
            return slot
    raise NotApplicableError(f"zone {zone} has no free slot")


def goals_reached(achieved: np.ndarray, desired: np.ndarray, threshold: float = EPSILON,
                  z_tolerance: float | None = None, xy_tolerance: float | None = None) -> np.ndarray:
    """f(s, g) over (..., 12) goal vectors: every block within ``threshold`` of its target and,
    with ``z_tolerance``, also within that height of it; with ``xy_tolerance``, also within that
    horizontal distance of it.

    The paper's test is the 5 cm ball alone. ψ also needs the block at rest height (``on`` and
    ``on-table``: within half a block vertically), so a block carried 3 cm above its slot reaches
    the goal but not ψ; a ``z_tolerance`` under half a block makes the reward ask for what ψ asks.
    A zone's two slots are 8 cm apart and a slot is taken by any block within 5.5 cm of it
    (``layout.SLOT_CLEARANCE``), so a block the 5 cm ball lets land 4 cm off its slot, towards the
    other one, takes both and the zone's next Move has none; an ``xy_tolerance`` of 2 cm asks for
    a placement that leaves the other slot free.
    """
    achieved, desired = np.asarray(achieved, dtype=float), np.asarray(desired, dtype=float)
    diff = (achieved - desired).reshape(np.broadcast_shapes(achieved.shape, desired.shape)[:-1] + (-1, 3))
    near = np.linalg.norm(diff, axis=-1) <= threshold
    if z_tolerance is not None:
        near &= np.abs(diff[..., 2]) <= z_tolerance
    if xy_tolerance is not None:
        near &= np.linalg.norm(diff[..., :2], axis=-1) <= xy_tolerance
    return np.all(near, axis=-1)
