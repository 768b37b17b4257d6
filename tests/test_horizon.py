"""Adaptive skill horizons (``HierarchicalConfig.skill_horizon``, ``asgrl.horizon``): the fixed cap until a
landmark has 20 successful runs, then ``factor`` x the 90th percentile of the last 100, within 16..cap."""
from __future__ import annotations

import pytest

from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.horizon import MIN_HORIZON, MIN_SUCCESSES, WINDOW, SkillHorizons
from asg.learning.errors import ConfigError


def test_the_fixed_cap_until_enough_successes_then_the_quantile():
    horizons = SkillHorizons(2, 2.0, 700)
    for _ in range(MIN_SUCCESSES - 1):
        horizons.record(0, 40)
    assert horizons.horizon(0) == 700 and horizons.horizon(1) == 700
    horizons.record(0, 40)
    assert horizons.horizon(0) == 80 and horizons.horizon(1) == 700
    for steps in range(1, 11):  # 20 runs of 40 and 10 of 1..10: the 90th percentile is still 40
        horizons.record(0, steps)
    assert horizons.horizon(0) == 80


def test_the_horizon_stays_within_its_bounds_and_forgets_old_runs():
    horizons = SkillHorizons(1, 3.0, 100)
    for _ in range(MIN_SUCCESSES):
        horizons.record(0, 1)
    assert horizons.horizon(0) == MIN_HORIZON  # three steps would leave a one-step landmark no detour
    for _ in range(WINDOW):
        horizons.record(0, 90)
    assert horizons.horizon(0) == 100  # 270 capped at skill_max_steps; the one-step runs are forgotten


def test_state_round_trip_and_a_foreign_state_is_refused():
    horizons = SkillHorizons(2, 2.0, 700)
    for steps in range(30):
        horizons.record(1, steps)
    again = SkillHorizons(2, 2.0, 700)
    again.load_state_dict(horizons.state_dict())
    assert again.horizon(1) == horizons.horizon(1) < 700 and list(again.lengths[1]) == list(range(30))
    with pytest.raises(ValueError, match="for 2 subgoals, the model gives 3"):
        SkillHorizons(3, 2.0, 700).load_state_dict(horizons.state_dict())


@pytest.mark.parametrize("value", [0.5, -1.0, True])
def test_a_factor_below_one_is_refused_naming_the_option(value):
    cfg = make_config("household-v1", "asgrl", seed=0)
    with pytest.raises(ConfigError, match="skill_horizon"):
        merge_overrides(cfg, {"learner": {"skill_horizon": value}})


def test_both_switches_are_off_by_default_and_in_the_paper_preset():
    for preset in ("asg", "paper"):
        learner = make_config("household-v1", "asgrl", seed=0, preset=preset).learner
        assert learner.skill_horizon == 0.0 and learner.retry_timed_out is False
