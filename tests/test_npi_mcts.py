"""Golden tests of the recursive MCTS on a tiny hand-made program library (three bits).

Programs: Set_X / Unset_X (atomic, X in A, B, C), Set_AB (level 1: bits a and b on) and
Set_All (level 2: all three on; may call Set_AB). Action indices: 0-2 Set_A..C, 3-5 Unset_A..C,
6 Set_AB, 7 Set_All, 8 Stop.
"""
from __future__ import annotations

import numpy as np
import pytest
from toy_domains import bits_world, on

from asg.learning.npi.config import SearchConfig
from asg.learning.npi.landmark_guidance import LandmarkGuide
from asg.learning.npi.mcts import (
    SearchContext,
    add_dirichlet,
    execute,
    expand,
    masked_priors,
    new_root,
    q_values,
    run_simulations,
    stop_value,
    tree_policy,
)
from asg.learning.world_models.program_models import AtomWorld

SET_A, SET_B, SET_C, UNSET_A, SET_AB, SET_ALL, STOP = 0, 1, 2, 3, 6, 7, 8


class Uniform:
    """Evaluator stub: equal logits, a fixed value, a 1-d recurrent state."""

    def __init__(self, value: float = 0.0, logits: np.ndarray | None = None) -> None:
        self.value, self.logits, self.calls = value, logits, 0

    def initial_hidden(self):
        return np.zeros(1), np.zeros(1)

    def evaluate(self, state, task, h, c):
        self.calls += 1
        logits = np.zeros(9) if self.logits is None else self.logits
        return logits, self.value, h + 1, c


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> AtomWorld:
    return bits_world(tmp_path_factory.mktemp("bits"))


def context(world, seed=0, evaluator=None, **search) -> SearchContext:
    return SearchContext(world, evaluator or Uniform(), SearchConfig(**search), np.random.default_rng(seed))


def test_library_indices(world):
    assert world.table.names == ("Set_A", "Set_B", "Set_C", "Unset_A", "Unset_B", "Unset_C", "Set_AB", "Set_All")
    assert world.table.stop == STOP and world.table.tasks == (SET_AB, SET_ALL)


def test_masks_follow_calls_preconditions_and_call_budget(world):
    table = world.table
    assert np.flatnonzero(table.legal(SET_AB, on(), 0, 6)).tolist() == [SET_A, SET_B, SET_C, STOP]
    assert np.flatnonzero(table.legal(SET_ALL, on(), 0, 6)).tolist() == [SET_A, SET_B, SET_C, SET_AB, STOP]
    assert np.flatnonzero(table.legal(SET_AB, on("a"), 0, 6)).tolist() == [SET_B, SET_C, UNSET_A, STOP]
    assert np.flatnonzero(table.legal(SET_ALL, on(), 6, 6)).tolist() == [STOP]
    # without the ψ prunings (the paper's masks): a solved program may still call, a solved callee is callable
    assert table.legal(SET_AB, on("a", "b"), 1, 6, prunings=False)[[SET_C, STOP]].all()
    assert table.legal(SET_ALL, on("a", "b"), 0, 6, prunings=False)[SET_AB]
    assert not table.legal(SET_ALL, on("a", "b"), 0, 6)[SET_AB]
    assert np.flatnonzero(table.legal(SET_ALL, on(), 6, 6, prunings=False)).tolist() == [STOP]


def test_priors_are_renormalised_over_legal_actions_and_all_zero_is_uniform():
    legal = np.array([True, False, True, True])
    p = masked_priors(np.array([1.0, 5.0, 0.0, 0.0]), legal)
    assert p[1] == 0 and p.sum() == pytest.approx(1.0)
    assert p[0] / p[2] == pytest.approx(np.e)
    dead = masked_priors(np.array([-1e6, 0.0, -1e6, -1e6]), legal)  # all mass on the illegal action
    assert dead.tolist() == pytest.approx([1 / 3, 0.0, 1 / 3, 1 / 3])
    assert masked_priors(np.zeros(4), np.zeros(4, dtype=bool)).sum() == 0


def test_dirichlet_noise_stays_on_legal_actions():
    legal = np.array([True, False, True, True])
    p = add_dirichlet(np.array([0.5, 0.0, 0.25, 0.25]), legal, np.random.default_rng(1), 0.25, 0.03)
    assert p[1] == 0 and p.sum() == pytest.approx(1.0) and (p >= 0.5 * 0.75 - 1e-12)[0]


def test_level_term_prefers_higher_level_callees(world):
    ctx = context(world)
    term = ctx.level_term(SET_ALL)
    assert term[[SET_A, SET_B, SET_C]] == pytest.approx([3 * np.exp(-2)] * 3)
    assert term[SET_AB] == pytest.approx(3 * np.exp(-1)) and term[STOP] == pytest.approx(3 * np.exp(-1))
    root = new_root(SET_ALL, world.encode(on()), ctx, explore=False)
    run_simulations(root, 1, ctx, explore=False)
    assert root.visits[SET_AB] == 1  # level term 1.10 beats 0.41 of the atomic calls
    flat = context(world, c_level=0.0)
    root = new_root(SET_ALL, world.encode(on()), flat, explore=False)
    run_simulations(root, 1, flat, explore=False)
    assert root.visits[SET_A] == 1  # without it, equal scores: the first legal action


def test_golden_visit_counts(world):
    """Set_AB from all-off, uniform priors, value 0: worked by hand from the P-UCT rule."""
    ctx = context(world)
    root = new_root(SET_AB, world.encode(on()), ctx, explore=False)
    run_simulations(root, 4, ctx, explore=False)
    # Sims 1-3 open Set_A, Set_B, Set_C (c_puct·P·sqrt(N)/(1+n) favours unvisited ones, ties
    # go to the lowest index); sim 4 opens Stop: (on a)(on b) is false, so it is worth -1.
    assert root.visits.tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 1]
    assert q_values(root, "softmax")[STOP] == -1.0 and root.count == 5
    run_simulations(root, 1, ctx, explore=False)
    # Sim 5: Set_A scores 0.5·0.25·sqrt(5)/2 = 0.14 against Stop's -1 + 0.14: descend into Set_A,
    # whose first legal action Set_B opens a new node.
    assert root.visits.tolist() == [2, 1, 1, 0, 0, 0, 0, 0, 1]
    assert root.children[SET_A].children[SET_B].atoms == on("a", "b")
    policy = tree_policy(root, 1.3)
    assert policy[SET_A] == pytest.approx(2**1.3 / (2**1.3 + 3)) and policy[UNSET_A] == 0


def test_stop_is_discounted_success_or_failure(world):
    ctx = context(world)
    assert stop_value(ctx, SET_AB, on("a", "b"), 2) == pytest.approx(0.97**2)
    assert stop_value(ctx, SET_AB, on("a"), 2) == -1.0
    root = new_root(SET_AB, world.encode(on("a", "b")), ctx, explore=False)
    leaf = expand(root, STOP, ctx, explore=False)
    assert leaf.terminal and leaf.terminal_value == 1.0  # ψ already holds: Stop at depth 0


def test_recursion_runs_a_new_search_for_a_non_atomic_call(world):
    ctx = context(world, sub_simulations=30, simulations_exploit=30)
    trace = execute(SET_ALL, world.encode(on()), ctx, explore=False)
    first = trace.steps[0]
    assert first.action == SET_AB and first.call is not None and first.call.task == SET_AB
    assert np.array_equal(first.call.steps[0].state, first.state)  # the sub-search starts where its caller is
    assert first.call.success and world.atoms(first.call.final_state) >= on("a", "b")
    assert np.array_equal(trace.steps[1].state, first.call.final_state)
    assert trace.success and trace.value == pytest.approx(0.97 ** trace.calls)
    assert trace.steps[-1].action == STOP
    names = [world.table.names[a] for a in trace.atomic_actions()]
    assert world.atoms(trace.final_state) == on("a", "b", "c") and "Set_C" in names
    assert trace.to_json(world.table.names)["calls"][0]["program"] == "Set_AB"


def test_a_failed_sub_call_is_worth_minus_one(world):
    # Set_AB needs two calls; a budget of one forces Stop with only one bit set.
    ctx = context(world, sub_simulations=5, max_calls=1)
    root = new_root(SET_ALL, world.encode(on()), ctx, explore=False)
    child = expand(root, SET_AB, ctx, explore=False)
    assert child.terminal and child.terminal_value == -1.0
    assert not child.call.success and len(child.call.steps) == 2  # 1 call, then the forced Stop
    assert child.call.steps[-1].action == STOP


def test_a_program_whose_post_holds_can_only_stop(world):
    legal = world.table.legal(SET_AB, on("a", "b"), 1, 6)
    assert np.flatnonzero(legal).tolist() == [STOP]
    assert world.table.legal(SET_AB, on("a"), 1, 6)[[SET_B, SET_C, UNSET_A, STOP]].all()
    # Logits that favour undoing the work still stop at once: ψ holds, no call can earn more.
    undo = np.zeros(9)
    undo[3:6] = 10.0
    ctx = context(world, evaluator=Uniform(logits=undo), simulations_exploit=5)
    trace = execute(SET_AB, world.encode(on("a", "b", "c")), ctx, explore=False)
    assert [s.action for s in trace.steps] == [STOP] and trace.success and trace.value == 1.0


def test_a_non_atomic_program_whose_post_holds_is_not_called(world):
    # Set_AB would return at once, the state unchanged: a call spent for nothing.
    assert not world.table.legal(SET_ALL, on("a", "b"), 0, 6)[SET_AB]
    assert world.table.legal(SET_ALL, on("a"), 0, 6)[SET_AB]
    assert world.table.preconditions(on("a", "b"))[SET_AB]  # φ itself still holds


def test_same_seed_same_trace_while_exploring(world):
    def run(seed):
        ctx = context(world, seed=seed, simulations=40)
        trace = execute(SET_ALL, world.encode(on()), ctx, explore=True)
        return [s.action for s in trace.steps], np.concatenate([s.policy for s in trace.steps])

    a, b = run(3), run(3)
    assert a[0] == b[0] and np.array_equal(a[1], b[1])


def test_landmark_guidance_targets_the_next_landmarks(world):
    guide = LandmarkGuide(world.table)
    progress = guide.start("Set_All", on("a"))
    assert guide.next_literals(progress) == on("b", "c")
    legal = world.table.legal(SET_ALL, on("a"), 1, 6)
    assert np.flatnonzero(guide.achievers(progress, legal)).tolist() == [SET_B, SET_C, SET_AB]
    later = guide.advance(progress, on("a", "b"))
    legal = world.table.legal(SET_ALL, on("a", "b"), 2, 6)
    assert np.flatnonzero(guide.achievers(later, legal)).tolist() == [SET_C]
    lost = guide.advance(later, on("b"))  # a goal landmark lost is needed again
    assert guide.next_literals(lost) == on("a", "c")


def test_landmark_prior_mixes_toward_achievers(world):
    ctx = context(world, landmark="prior", landmark_weight=0.5)
    ctx.guide = LandmarkGuide(world.table)
    root = new_root(SET_ALL, world.encode(on("a")), ctx, explore=False)
    legal = np.flatnonzero(root.legal)  # Set_B, Set_C, Unset_A, Set_AB, Stop
    assert root.prior[legal] == pytest.approx([0.5 / 5 + 0.5 / 3, 0.5 / 5 + 0.5 / 3, 0.1, 0.5 / 5 + 0.5 / 3, 0.1])
