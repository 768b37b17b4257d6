"""Retry noise in the real world (issue 36; ``search.retry_noise``, ours, 0 in every preset): a call right after a
failed call of the same program runs the controller with Gaussian action noise; every other call stays greedy."""
from __future__ import annotations

import numpy as np
import pytest

from asg.envs.fetch import FetchBlocksEnv
from asg.learning.errors import ConfigError
from asg.learning.npi.config import SearchConfig
from asg.learning.npi.inference import FetchExecutor
from asg.planning.programs import fetch_library

NAMES = [p.name for p in fetch_library()]
MOVE, OTHER = NAMES.index("Move_To_Zone_0_ORANGE"), NAMES.index("Move_To_Zone_1_BLUE")


class Still:
    """A controller that never moves the arm: every program it runs fails its goal test."""

    def reset(self, obs, goal, block=None) -> None:
        pass

    def act(self, obs) -> np.ndarray:
        return np.zeros(4)


def runs(noise: float, programs: list[int], seed: int = 3) -> list:
    executor = FetchExecutor(FetchBlocksEnv(initial_state="table", max_steps=None), Still(), retry_noise=noise)
    executor.reset(seed)
    return [executor.run(p) for p in programs]


def test_a_retry_after_a_failure_is_noisy_and_seeded():
    greedy_first, greedy_retry = runs(0.0, [MOVE, MOVE])
    first, retry = runs(0.3, [MOVE, MOVE])
    assert first.applicable and not first.success
    np.testing.assert_array_equal(first.final, greedy_first.final)  # the first call is greedy
    assert np.abs(retry.final - greedy_retry.final).max() > 0.02  # the retry's arm went elsewhere
    np.testing.assert_array_equal(retry.final, runs(0.3, [MOVE, MOVE])[1].final)  # noise from the episode's seed


def test_only_a_retry_of_the_failed_program_is_noisy():
    first, switched = runs(0.3, [MOVE, OTHER])
    assert not first.success
    np.testing.assert_array_equal(switched.final, runs(0.0, [MOVE, OTHER])[1].final)  # another program: greedy


def test_retry_noise_is_checked():
    with pytest.raises(ConfigError, match="retry_noise"):
        SearchConfig(retry_noise=-0.1)
