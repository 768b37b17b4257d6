"""Labelers F(s, f): hand-built states, vocabularies, monotone atoms, sticky achievement."""
from __future__ import annotations

import pytest

from asg import pddl_models
from asg.envs import household as hh
from asg.envs import mario as mo
from asg.envs import minecraft as mc
from asg.envs.domains import DOMAINS, UnknownDomainError, get_domain
from asg.envs.labeling import AchievementTracker, Labeler, UnknownAtomError
from asg.envs.solver import reachable
from asg.planning import load_task
from asg.planning.errors import AsgError
from asg.planning.task import Atom


def names(atoms) -> set[str]:
    return {str(a) for a in atoms}


def test_mario_labeler_on_hand_built_states():
    label = mo.MARIO_LABELER.atoms_of
    assert names(label(mo.MarioState())) == {"(at-upper-platform)"}
    assert names(label(mo.MarioState(pos=(6, 3)))) == {"(at-bottom)"}
    assert names(label(mo.MarioState(pos=(5, 1), has_key=True))) == {"(has-key)"}
    assert names(label(mo.MarioState(pos=(3, 7)))) == {"(in-tube)"}
    up_with_key = mo.MarioState(pos=(1, 5), has_key=True, worn=(True,) * 4)
    assert names(label(up_with_key)) == {"(at-upper-platform)", "(at-upper-platform-with-key)",
                                         "(has-key)", "(ladder-broken)"}
    opened = mo.MarioState(pos=mo.DOOR, has_key=True, has_hidden_key=True, status=mo.SUCCESS)
    assert {"(door-open)", "(has-hidden-key)"} <= names(label(opened))
    failed = mo.MarioState(pos=mo.DOOR, status=mo.FAILED)
    assert "(door-open)" not in names(label(failed))


def test_household_labeler_on_hand_built_states():
    label = hh.HOUSEHOLD_LABELER.atoms_of
    assert names(label(hh.HouseholdState())) == {"(at-starting-room)", "(door-locked)"}
    doorway = hh.HouseholdState(pos=hh.DOOR, dir=0, carrying="red", door=hh.OPEN, battery=hh.FULL)
    assert names(label(doorway)) == {"(door-ajar)", "(door-open)", "(has-key)", "(holding red)",
                                     "(charged)"}
    inside = hh.HouseholdState(pos=(hh.DOOR[0] + 1, hh.DOOR[1]), carrying="red", door=hh.CLOSED,
                               battery=hh.FULL)
    assert names(label(inside)) == {"(at-final-room)", "(has-key)", "(holding red)", "(charged)"}
    drained = hh.HouseholdState(pos=(hh.DOOR[0] - 1, hh.DOOR[1]), carrying="yellow", door=hh.OPEN, battery=hh.EMPTY,
                                status=hh.FAILED)
    assert names(label(drained)) == {"(at-starting-room)", "(has-key)", "(holding yellow)",
                                     "(door-open)", "(battery-empty)"}
    assert names(label(hh.HouseholdState(pos=hh.DOCK, battery=hh.FULL))) >= {"(at-dock)", "(charged)"}
    goal = hh.HouseholdState(pos=hh.GOAL, door=hh.CLOSED, status=hh.SUCCESS)
    assert names(label(goal)) == {"(at-final-room)", "(at-destination)"}


def test_minecraft_labeler_on_hand_built_states():
    label = mc.MINECRAFT_LABELER.atoms_of
    assert names(label(mc.MineCraftState())) == {"(at-starting-location)"}
    carrying = mc.MineCraftState(pos=(1, 1), raw_wood=2, wood_left=(False, False, True))
    assert names(label(carrying)) == {"(has-raw-wood)", "(has-two-raw-wood)"}
    made = mc.MineCraftState(pos=mc.STICK_SHOP, processed_wood=1, planks=1, sticks=1, kiln_used=True)
    assert names(label(made)) == {"(wood-processed)", "(plank_made)", "(stick_made)", "(kiln-used)"}
    done = mc.MineCraftState(pos=mc.LADDER_SHOP, kiln_used=True, status=mc.SUCCESS)
    assert names(label(done)) == {"(ladder_made)", "(kiln-used)"}


def test_labeler_reads_the_env_through_wrappers():
    spec = DOMAINS["household-v1"]
    env = spec.make_env()
    env.reset(seed=0)
    assert spec.labeler(env) == spec.labeler.atoms_of(env.unwrapped.hashable_state())
    assert spec.labeler.holds("(at-starting-room)", env.unwrapped.hashable_state())
    assert spec.labeler.holds(Atom("charged", negated=True), env.unwrapped.hashable_state())


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_labeler_knows_every_fluent_of_the_paper_model(name):
    spec = DOMAINS[name]
    task = load_task(spec.model_path())
    spec.labeler.check_vocabulary(task.facts)
    assert spec.load_task().goal == task.goal


def test_unknown_atoms_are_named():
    with pytest.raises(UnknownAtomError, match=r"\(holding blue\).*it knows") as err:
        hh.HOUSEHOLD_LABELER.check_vocabulary([Atom("holding", ("blue",)), Atom("has-key")], "m.pddl")
    assert isinstance(err.value, AsgError) and "m.pddl" in str(err.value)
    assert "(has-key)" not in str(err.value).split("it knows")[0]


@pytest.mark.parametrize("name", ["household-v1", "minecraft", "mario"])
def test_monotone_atoms_never_turn_false(name):
    spec = DOMAINS[name]
    env = spec.make_env().unwrapped
    env.reset(seed=0)
    n = int(env.action_space.n)
    states = reachable(env.hashable_state(), env.transition, n)
    for state in states:
        before = spec.labeler.atoms_of(state) & spec.labeler.monotone
        for action in range(n):
            after = spec.labeler.atoms_of(env.transition(state, action)[0])
            assert before <= after, (state, action)


@pytest.mark.parametrize("name", ["household-v1", "household-v2", "minecraft", "mario"])
def test_goal_atoms_hold_exactly_in_goal_states_of_the_whole_state_space(name):
    # MVTR condition 1, checked exhaustively (the envs are small enough).
    spec = DOMAINS[name]
    task = spec.load_task()
    env = spec.make_env().unwrapped
    env.reset(seed=0)
    for state in reachable(env.hashable_state(), env.transition, int(env.action_space.n)):
        assert task.goal_reached(spec.labeler.atoms_of(state)) == (state.status == "success")


def test_achievement_tracker_is_sticky():
    spec = DOMAINS["mario"]
    env = spec.make_env()
    env.reset(seed=0)
    tracker = AchievementTracker()
    assert names(tracker.reset(spec.labeler(env))) == {"(at-upper-platform)"}
    for action in spec.solver.plan(env):
        env.step(action)
        tracker.update(spec.labeler(env))
        if "(has-key)" in names(tracker.achieved):
            # the key cell (5, 1) is off the bottom row: at-bottom is false now but achieved
            assert Atom("at-bottom") not in spec.labeler(env)
            break
    assert tracker.first[Atom("at-bottom")] < tracker.first[Atom("has-key")] == tracker.step
    assert tracker.update(spec.labeler(env)) == frozenset()


def test_labeler_declaration_errors():
    with pytest.raises(ValueError, match="twice"):
        Labeler("d", ((Atom("a"), bool), (Atom("a"), bool)))
    with pytest.raises(ValueError, match="positive"):
        Labeler("d", ((Atom("a", negated=True), bool),))
    with pytest.raises(ValueError, match="monotone"):
        Labeler.from_table("d", {"(a)": bool}, monotone=("(b)",))


def test_domain_registry():
    assert set(DOMAINS) == {"household-v1", "household-v2", "minecraft", "mario", "pixel-mario"}
    assert {spec.model_path().name for spec in DOMAINS.values()} <= set(pddl_models.names())
    assert DOMAINS["household-v1"].env_id == DOMAINS["household-v2"].env_id
    with pytest.raises(UnknownDomainError, match="choose one of"):
        get_domain("zelda")
