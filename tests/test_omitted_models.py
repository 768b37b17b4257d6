"""The models that leave out a mechanism their world has (``pddl_models/omitted/``, issue 17)."""
from __future__ import annotations

from pathlib import Path

import pytest

from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_domain, make_subgoals

OMITTED = Path(__file__).resolve().parents[1] / "pddl_models" / "omitted"
MODELS = [("household_no_battery", "household-v1", "(charged)"), ("household_no_key", "household-v1", "(has-key)"),
          ("mario_no_key", "mario", "(has-key)"), ("minecraft_no_processing", "minecraft", "(wood-processed)")]


@pytest.mark.parametrize("stem, domain, left_out", MODELS)
def test_an_omitted_model_binds_to_its_world_without_the_mechanism(stem, domain, left_out):
    model = OMITTED / f"{stem}.pddl"
    binding = bind_domain(domain, model)  # the world's labeler knows every atom of the model
    cfg = make_config(domain, "asgrl", model=str(model))
    names = make_subgoals(cfg, binding.task).names()  # the domain's per-landmark k does not get in the way
    assert names and left_out not in names and not any(left_out in name for name in names)


def test_a_k_override_the_user_set_is_still_checked_against_the_model():
    model = OMITTED / "household_no_key.pddl"
    cfg = make_config("household-v1", "asgrl", model=str(model))
    mine = merge_overrides(cfg, {"learner": {"diversity": {"k_overrides": [["(has-key)", 5]]}}})
    with pytest.raises(ConfigError, match=r"k_overrides\[0\]: '\(has-key\)' is not a landmark"):
        make_subgoals(mine, bind_domain("household-v1", model).task)


@pytest.mark.slow
@pytest.mark.parametrize("stem, domain, seed", [("household_no_battery", "household-v1", 4),
                                                ("household_no_battery", "household-v1", 6),
                                                ("minecraft_no_processing", "minecraft", 1),
                                                ("minecraft_no_processing", "minecraft", 5),
                                                ("minecraft_no_processing", "minecraft", 8)])
def test_asgrl_defaults_solve_the_seeds_app_g_settings_failed(stem, domain, seed):
    """These five runs end at 0.00 with App. G's 700-step cap and no dead ends (docs/asgrl.md); ASGRL's
    defaults (2,000-step cap, dead-end landmark states) solve every seed of every omitted model."""
    model = str(OMITTED / f"{stem}.pddl")
    assert train(make_config(domain, "asgrl", model=model, seed=seed), bind_domain(domain, model)).success_rate == 1.0
