"""The meta-controller's switches beside the ψ prunings: the trace buffer's scope, the call limit
per level and Stop scored at expansion.

``NPIConfig.buffer_scope`` ("program": n_buf traces of each program, the reference code's split;
"all": one buffer of n_buf traces, T5's reading), ``SearchConfig.level_max_calls`` ((level,
limit) pairs over ``max_calls``) and ``SearchConfig.stop_at_expansion`` (ours: every expanded
node's Stop child is scored at once, as one visit). Checked on a three-bit library: Set_X /
Unset_X atomic, Set_AB at level 1 and Set_All at level 2 (it may call Set_AB).
"""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from toy_domains import bits_world, on

from asg.learning import fetch_programs as fp
from asg.learning.errors import ConfigError
from asg.learning.npi.config import NPIConfig, SearchConfig, from_dict, to_dict
from asg.learning.npi.inference import ModelExecutor, run_program
from asg.learning.npi.mcts import SearchContext, Trace, execute, new_root
from asg.learning.npi.trainer import POOL, MetaControllerTrainer, TraceBuffer, TraceSample
from asg.learning.world_models.program_models import AtomWorld

SET_AB, SET_ALL, STOP = 6, 7, 8  # action indices; Set_AB is task row 0, Set_All row 1


class AvoidStop:
    """Evaluator stub: equal logits except a very low Stop, value 0, a 1-d recurrent state."""

    def initial_hidden(self):
        return np.zeros(1), np.zeros(1)

    def evaluate(self, state, task, h, c):
        logits = np.zeros(STOP + 1)
        logits[STOP] = -10.0
        return logits, 0.0, h, c


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> AtomWorld:
    return bits_world(tmp_path_factory.mktemp("bits"))


def trace(row: int, success: bool, tag: int) -> TraceSample:
    """A one-step sample of task row ``row``; ``value`` carries ``tag`` to tell samples apart."""
    return TraceSample(np.zeros((1, 2), np.float32), np.ones((1, 3), bool), np.full((1, 3), 1 / 3, np.float32),
                       row, float(tag), success)


# -- the trace buffer ----------------------------------------------------------------------------
def test_scope_all_keeps_the_last_traces_over_every_program():
    buffer = TraceBuffer(3, 0.5, "all")
    for tag in range(6):
        buffer.add(trace(tag % 2, True, tag))
    assert list(buffer.items) == [POOL] and len(buffer) == 3
    assert [s.value for s in buffer.items[POOL]] == [3.0, 4.0, 5.0]
    assert {s.task_row for s in buffer.items[POOL]} == {0, 1}


def test_scope_program_keeps_the_last_traces_of_each_program():
    buffer = TraceBuffer(3, 0.5)  # the default scope
    for tag in range(10):
        buffer.add(trace(0 if tag < 7 else 1, True, tag))
    assert sorted(buffer.items) == [0, 1] and len(buffer) == 6
    assert [s.value for s in buffer.items[0]] == [4.0, 5.0, 6.0]
    assert [s.value for s in buffer.items[1]] == [7.0, 8.0, 9.0]


def _filled(scope: str, p_positive: float) -> TraceBuffer:
    """Program row 0 holds 2 positive traces, row 1 holds 8 negative ones."""
    buffer = TraceBuffer(100, p_positive, scope)
    for tag in range(10):
        buffer.add(trace(0 if tag < 2 else 1, tag < 2, tag))
    return buffer


def test_scope_all_draws_positives_with_p_buf_from_the_whole_pool():
    drawn = _filled("all", 0.8).sample(4000, np.random.default_rng(0))
    assert 0.75 < np.mean([s.success for s in drawn]) < 0.85


def test_scope_program_draws_a_program_first():
    # Half the draws pick row 0 (positives only), half row 1 (negatives only): p_buf does not matter.
    drawn = _filled("program", 0.8).sample(4000, np.random.default_rng(0))
    assert 0.45 < np.mean([s.success for s in drawn]) < 0.55


@pytest.mark.parametrize("scope", ["program", "all"])
def test_an_empty_side_falls_back_to_the_other(scope):
    buffer = TraceBuffer(10, 1.0, scope)
    for tag in range(4):
        buffer.add(trace(tag % 2, False, tag))
    assert not any(s.success for s in buffer.sample(50, np.random.default_rng(1)))
    buffer = TraceBuffer(10, 0.0, scope)
    for tag in range(4):
        buffer.add(trace(tag % 2, True, tag))
    assert all(s.success for s in buffer.sample(50, np.random.default_rng(1)))


def test_an_unknown_scope_is_refused():
    with pytest.raises(ValueError, match="scope must be one of"):
        TraceBuffer(3, 0.5, "task")


def test_the_trainer_uses_the_configured_scope_and_its_checkpoint_keeps_it(world):
    config = NPIConfig(search=SearchConfig(simulations=3, simulations_exploit=2), episodes_per_iteration=2,
                       buffer_size=3, buffer_scope="all")
    trainer = MetaControllerTrainer(world, config, seed=0)
    trainer.collect(SET_AB)
    trainer.collect(SET_ALL)
    assert list(trainer.buffer.items) == [POOL] and len(trainer.buffer) == 3
    assert [s.task_row for s in trainer.buffer.items[POOL]] == [0, 1, 1]
    again = MetaControllerTrainer(world, config, seed=1)
    again.load_state_dict(trainer.state_dict())
    assert [s.task_row for s in again.buffer.items[POOL]] == [0, 1, 1]
    default = MetaControllerTrainer(world, NPIConfig(search=config.search, episodes_per_iteration=2), seed=0)
    default.collect(SET_AB)
    default.collect(SET_ALL)
    assert sorted(default.buffer.items) == [0, 1] and len(default.buffer) == 4


# -- the call limit ------------------------------------------------------------------------------
def test_the_default_is_one_limit_for_every_level(world):
    cfg = SearchConfig()
    assert cfg.level_max_calls == () and [cfg.call_limit(level) for level in (1, 2, 3)] == [6, 6, 6]
    ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(0))
    assert ctx.call_limit(SET_AB) == ctx.call_limit(SET_ALL) == 6


def test_a_level_limit_makes_stop_the_only_action_of_that_level_only(world):
    ctx = SearchContext(world, AvoidStop(), SearchConfig(level_max_calls=((1, 2),)), np.random.default_rng(0))
    table = world.table
    assert ctx.call_limit(SET_AB) == 2 and ctx.call_limit(SET_ALL) == 6

    def legal(task: int, depth: int) -> list[int]:
        return np.flatnonzero(table.legal(task, on(), depth, ctx.call_limit(task))).tolist()

    assert legal(SET_AB, 1) != [STOP] and legal(SET_AB, 2) == [STOP]
    assert legal(SET_ALL, 2) != [STOP] and legal(SET_ALL, 5) != [STOP] and legal(SET_ALL, 6) == [STOP]


def _calls_within_limits(trace: Trace, limits: dict[int, int], levels: np.ndarray) -> bool:
    own = trace.calls <= limits.get(int(levels[trace.task]), 6)
    return own and all(_calls_within_limits(s.call, limits, levels) for s in trace.steps if s.call is not None)


@pytest.mark.parametrize("seed", range(4))
def test_the_search_keeps_each_level_within_its_limit(world, seed):
    limits = {1: 1, 2: 2}
    cfg = SearchConfig(level_max_calls=tuple(limits.items()), psi_prunings=False, simulations=12)
    ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(seed))
    done = execute(SET_ALL, world.encode(on()), ctx, explore=True)
    assert _calls_within_limits(done, limits, world.table.levels)
    assert done.calls == 2  # Stop is a failure before all three bits are on: the search spends its calls


def test_network_inference_stops_at_the_level_limit(world):
    # The stub never stops by choice, and without the ψ prunings only the call limit ends a program.
    def calls(cfg: SearchConfig) -> int:
        ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(0))
        return len(run_program("network", SET_ALL, ModelExecutor(world, world.encode(on())), ctx).calls)

    assert calls(SearchConfig(psi_prunings=False)) == 6
    assert calls(SearchConfig(psi_prunings=False, level_max_calls=((2, 2),))) == 2
    assert calls(SearchConfig(psi_prunings=False, level_max_calls=((1, 2),))) == 6


def test_a_level_without_non_atomic_programs_is_refused(world):
    cfg = SearchConfig(level_max_calls=((2, 3), (3, 2)))
    with pytest.raises(ConfigError, match=r"^search\.level_max_calls\[1\]: level 3 has no non-atomic program .*"
                                          r"\(levels 1, 2\)$"):
        SearchContext(world, AvoidStop(), cfg, np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"^search\.level_max_calls\[1\]: level 3 "):
        MetaControllerTrainer(world, NPIConfig(search=cfg), seed=0)


# -- Stop scored at expansion ---------------------------------------------------------------------
def test_stop_is_scored_at_expansion_as_one_visit_only_when_asked(world):
    def root(cfg: SearchConfig, *bits: str):
        return new_root(SET_AB, world.encode(on(*bits)), SearchContext(world, AvoidStop(), cfg,
                                                                       np.random.default_rng(0)), False)

    lazy = root(SearchConfig(psi_prunings=False), "a", "b")
    assert lazy.visits.sum() == 0 and not lazy.children and lazy.count == 1
    done = root(SearchConfig(psi_prunings=False, stop_at_expansion=True), "a", "b")
    assert done.visits.tolist() == [0] * STOP + [1] and done.count == 2
    assert done.children[STOP].terminal and done.children[STOP].terminal_value == 1.0  # γ**0: ψ holds
    assert done.value_sum[STOP] == 1.0
    early = root(SearchConfig(psi_prunings=False, stop_at_expansion=True), "a")
    assert early.children[STOP].terminal_value == -1.0 and early.value_sum[STOP] == -1.0  # ψ false: failure


@pytest.mark.parametrize("seed", range(3))
def test_a_search_that_scores_stop_at_expansion_stops_once_psi_holds(world, seed):
    # The stub gives Stop almost no prior; with the paper's lazy Stop five simulations never try it from
    # a state where Set_AB is already done, and the call limit ends the program. Scored at expansion,
    # Stop's exact value wins the first simulation and the program returns at once.
    start = world.encode(on("a", "b"))

    def run(stop_at_expansion: bool) -> Trace:
        cfg = SearchConfig(psi_prunings=False, stop_at_expansion=stop_at_expansion)
        return execute(SET_AB, start, SearchContext(world, AvoidStop(), cfg, np.random.default_rng(seed)),
                       explore=False)

    lazy, eager = run(False), run(True)
    assert lazy.calls == 6 and eager.calls == 0 and eager.success and eager.value == 1.0
    cfg = SearchConfig(psi_prunings=False, stop_at_expansion=True)  # not yet done: Stop is a failure, so it calls
    ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(seed))
    done = execute(SET_AB, world.encode(on()), ctx, explore=False)
    assert done.success and 2 <= done.calls < 6


def test_re_planning_with_stop_scored_at_expansion_stops_in_the_world(world):
    cfg = SearchConfig(psi_prunings=False, stop_at_expansion=True)
    ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(0))
    record = run_program("replan", SET_ALL, ModelExecutor(world, world.encode(on("a", "b", "c"))), ctx)
    assert record.success and record.calls == ()


def test_re_planning_reports_every_search_with_its_level(world):
    """``on_search`` hears every search, in order, at its call depth: the searches alone rebuild
    the call tree the run returns."""
    cfg = SearchConfig(psi_prunings=False, stop_at_expansion=True)
    seen: list[tuple[int, int, int]] = []
    ctx = SearchContext(world, AvoidStop(), cfg, np.random.default_rng(0))
    record = run_program("replan", SET_ALL, ModelExecutor(world, world.encode(on())), ctx,
                         on_search=lambda root, action, level: seen.append((root.task, action, level)))
    table, searches = world.table, iter(seen)

    def rebuild(task: int, level: int) -> tuple:
        calls: list[object] = []
        for _ in range(ctx.call_limit(task) + 1):
            searched, action, at = next(searches)
            assert (searched, at) == (task, level)
            if action == table.stop:
                break
            calls.append(table.names[action] if table.is_atomic(action) else rebuild(action, level + 1))
        return (table.names[task], tuple(calls))

    def shape(call) -> object:
        return call.program if call.atomic else (call.program, tuple(shape(c) for c in call.calls))

    assert shape(record) == rebuild(SET_ALL, 0) and next(searches, None) is None
    assert len(seen) > 1 + len(record.calls)  # it called a non-atomic program, which searched too


# -- values, errors, round trips, presets --------------------------------------------------------
BAD = [
    ({"buffer_scope": "trace"}, "config.buffer_scope", 'expected one of "program", "all", got "trace"'),
    ({"buffer_scope": "All"}, "config.buffer_scope", "did you mean 'all'"),
    ({"search": {"level_max_calls": [[0, 2]]}}, "config.search.level_max_calls[0]",
     "expected a [level, limit] pair of ints >= 1, got [0, 2]"),
    ({"search": {"level_max_calls": [[1, 2], [2, 0]]}}, "config.search.level_max_calls[1]", "got [2, 0]"),
    ({"search": {"level_max_calls": [[1, 2], [1, 3]]}}, "config.search.level_max_calls[1]",
     "expected distinct levels, got level 1 twice"),
    ({"search": {"level_max_calls": [[1]]}}, "config.search.level_max_calls[0]", "expected a list of 2 items"),
    ({"search": {"level_max_calls": [[1, 2.5]]}}, "config.search.level_max_calls[0][1]", "expected an int"),
    ({"search": {"level_max_calls": [[1, True]]}}, "config.search.level_max_calls[0][1]", "got true"),
    ({"search": {"level_max_calls": 2}}, "config.search.level_max_calls", "expected a list"),
    ({"search": {"stop_at_expansion": "yes"}}, "config.search.stop_at_expansion", "expected true or false"),
]


@pytest.mark.parametrize(("extra", "path", "reason"), BAD, ids=lambda x: None)
def test_bad_values_give_one_line_naming_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        from_dict(extra, "config")
    message = str(err.value)
    assert message.startswith(f"{path}: ") and reason in message and "\n" not in message


def test_bad_values_built_directly_name_their_field():
    with pytest.raises(ConfigError, match=r"^buffer_scope: expected one of \"program\", \"all\""):
        NPIConfig(buffer_scope="task")
    with pytest.raises(ConfigError, match=r"^search\.level_max_calls\[0\]: expected a \[level, limit\] pair"):
        SearchConfig(level_max_calls=((1, 0),))
    with pytest.raises(ConfigError, match=r"^search\.level_max_calls: expected a list of \[level, limit\] pairs"):
        SearchConfig(level_max_calls=[(1, 2)])  # a list is not hashable: the frozen config wants a tuple


def test_both_fields_round_trip_through_json_and_old_configs_take_the_defaults():
    cfg = NPIConfig(buffer_scope="all", search=SearchConfig(level_max_calls=((1, 2), (2, 5))))
    data = json.loads(json.dumps(to_dict(cfg)))
    assert data["buffer_scope"] == "all" and data["search"]["level_max_calls"] == [[1, 2], [2, 5]]
    assert from_dict(data) == cfg
    old = to_dict(NPIConfig())
    del old["buffer_scope"], old["search"]["level_max_calls"], old["search"]["stop_at_expansion"]
    assert from_dict(old) == NPIConfig()


def test_the_shipped_meta_controller_was_trained_with_the_fast_preset():
    """Learned Stop: no ψ prunings, Stop scored at expansion, the trace buffer per program."""
    manifest = json.loads(fp.shipped("meta-controller").with_name("MANIFEST.json").read_text())
    cfg = from_dict(manifest["stages"]["meta-controller"]["config"]["config"])
    fast = fp.meta_controller_config("fast")
    assert cfg.search == fast.search and cfg.buffer_scope == fast.buffer_scope == "program"
    assert not cfg.search.psi_prunings and cfg.search.stop_at_expansion


def test_the_presets():
    fast, paper = fp.meta_controller_config("fast"), fp.meta_controller_config("paper")
    assert fast.buffer_scope == "program" and fast.search.level_max_calls == ()
    assert fast == replace(NPIConfig(), search=replace(NPIConfig().search, psi_prunings=False, stop_at_expansion=True))
    assert paper.buffer_scope == "all"  # T5: n_buf full trajectories in one buffer
    assert paper.search.level_max_calls == ()  # the paper gives no call limit: the one max_calls stays
    assert not fast.search.psi_prunings and not paper.search.psi_prunings  # ours: off in both; Stop is learned
    assert fast.search.stop_at_expansion and not paper.search.stop_at_expansion  # ours: on in fast only
