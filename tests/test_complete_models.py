"""The complete, correct models of App. F.2 (``pddl_models/complete/``): parse, ground, landmarks,
every atom read by the domain's labeler, and each an MVTR that the env shows in full."""
from __future__ import annotations

import pytest

from asg.envs.domains import DOMAINS
from asg.envs.mvtr_traces import ExplorationConfig, run_mvtr
from asg.learning.asgrl.subgoals import landmark_subgoals, plan_subgoals
from asg.planning import compute_landmarks, load_task

WORLDS = {"household-v1": "household", "mario": "mario", "minecraft": "minecraft"}
SMALL = ExplorationConfig(episodes=5, max_steps=200, branch_steps=20, seed=1)
# The mechanisms each approximate model of App. H lacks, as landmarks of the complete model.
MECHANISMS = {"household-v1": {"(holding red)", "(charged)", "(door-ajar)"},
              "mario": {"(in-tube)", "(has-hidden-key)"},
              "minecraft": {"(has-two-raw-wood)"}}


@pytest.mark.parametrize("domain", sorted(WORLDS))
def test_complete_model_grounds_and_its_landmarks_name_the_hidden_mechanisms(domain):
    spec = DOMAINS[domain]
    path = spec.complete_model_path()
    assert path.name == f"{WORLDS[domain]}.pddl" and path.is_file()
    task = load_task(path)
    graph = compute_landmarks(task)
    names = {" & ".join(sorted(str(a) for a in lm.atoms)) for lm in graph.subgoals()}
    assert MECHANISMS[domain] <= names
    subgoals = landmark_subgoals(task)
    assert subgoals.names()[-1] == " & ".join(sorted(str(a) for a in task.goal))
    assert len(plan_subgoals(task)) == len(subgoals)  # one plan operator per landmark


@pytest.mark.parametrize("domain", sorted(WORLDS))
def test_every_atom_is_read_by_the_labeler_and_init_is_the_reset_state(domain):
    spec = DOMAINS[domain]
    task = spec.load_task(spec.complete_model_path())  # raises UnknownAtomError otherwise
    env = spec.make_env()
    env.reset(seed=0)
    state = env.unwrapped.hashable_state()
    for atom in task.facts:
        assert spec.labeler.holds(atom, state) == (atom in task.init), atom


@pytest.mark.parametrize("domain", sorted(WORLDS))
def test_complete_model_is_an_mvtr_with_nothing_unseen(domain):
    spec = DOMAINS[domain]
    report = run_mvtr(spec, spec.complete_model_path(), config=SMALL)
    assert report.condition1.holds and report.condition2.holds, report.condition2.reason
    assert report.exit_code == 0
    assert not report.incompleteness.unrealised_actions and not report.incompleteness.unobserved_fluents


def test_household_v2_and_pixel_mario_share_their_worlds_complete_model():
    assert DOMAINS["household-v2"].complete_model_path() == DOMAINS["household-v1"].complete_model_path()
    assert DOMAINS["pixel-mario"].complete_model_path() == DOMAINS["mario"].complete_model_path()
