"""The one typed config reader (``learning/configio.py``) and the checks of every config dataclass:
presets round-trip through JSON, every bad value is a ``ConfigError`` that starts with its key path."""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

from asg.learning import configio
from asg.learning.asgrl.config import (
    DOMAIN_DIVERSITY,
    DiversityConfig,
    FlatConfig,
    HierarchicalConfig,
    MetaConfig,
    QConfig,
    TrainConfig,
    check_subgoals,
    config_from_dict,
    config_to_dict,
    default_learner,
    make_config,
    merge_overrides,
    small_preset,
)
from asg.learning.configio import deep_merge, override, read_config, to_dict
from asg.learning.errors import ConfigError
from asg.learning.goal_policy import config as goal_cfg
from asg.learning.npi import config as npi_cfg
from asg.learning.registry import METHODS, asgrl_domains, bind_domain, make_subgoals
from asg.learning.world_models.behaviour_model import BEHAVIOUR_PRESETS, BehaviourConfig

ASGRL_DOMAINS = ["mario", "pixel-mario", "household-v1", "household-v2", "minecraft"]


def asgrl_presets() -> list[TrainConfig]:
    """Every domain x method default, and the small preset of each method."""
    configs = [make_config(d, m) for d in ASGRL_DOMAINS for m in METHODS]
    return configs + [small_preset(make_config("mario", m)) for m in METHODS]


def all_presets() -> list[Any]:
    """One of every config class (defaults) and every preset the code ships."""
    return [*asgrl_presets(), QConfig(), DiversityConfig(), MetaConfig(), HierarchicalConfig(), FlatConfig(),
            goal_cfg.paper(), goal_cfg.fast(), goal_cfg.nonatomic_baseline(True), goal_cfg.nonatomic_baseline(False),
            goal_cfg.AgentConfig(), goal_cfg.ReplayConfig(), goal_cfg.ExploreConfig(), goal_cfg.DemoConfig(),
            goal_cfg.ScheduleConfig(), npi_cfg.NPIConfig(), npi_cfg.NetConfig(), npi_cfg.SearchConfig(),
            *BEHAVIOUR_PRESETS.values()]


def json_round_trip(cfg: Any) -> Any:
    text = json.dumps(to_dict(cfg), allow_nan=False)  # JSON-safe: no tuples, no NaN or Infinity
    return read_config(type(cfg), json.loads(text))


def test_domain_list_is_the_registry():
    assert sorted(ASGRL_DOMAINS) == asgrl_domains()


@pytest.mark.parametrize("cfg", all_presets(), ids=lambda c: getattr(c, "method", None) and
                         f"{c.domain}-{c.method}-{c.total_steps}" or type(c).__name__)
def test_every_config_and_preset_round_trips_through_json(cfg):
    again = json_round_trip(cfg)
    assert again == cfg and type(again) is type(cfg)
    assert to_dict(again) == to_dict(cfg)


def test_the_public_readers_are_the_shared_reader():
    cfg = make_config("household-v1", "asgrl", seed=4)
    assert config_from_dict(config_to_dict(cfg)) == cfg
    assert goal_cfg.from_dict(goal_cfg.to_dict(goal_cfg.fast())) == goal_cfg.fast()
    assert npi_cfg.from_dict(npi_cfg.to_dict(npi_cfg.NPIConfig())) == npi_cfg.NPIConfig()
    assert goal_cfg.from_dict({}) == goal_cfg.GoalPolicyConfig()  # missing keys take the defaults
    assert goal_cfg.from_dict({"schedule": {"actors": 28}}) == goal_cfg.paper()
    assert npi_cfg.from_dict({"search": {"c_puct": 1}}).search.c_puct == 1.0
    assert read_config(BehaviourConfig, {"epochs": 3}) == BehaviourConfig(epochs=3)


def test_tuples_lists_and_pairs():
    cfg = goal_cfg.from_dict({"agent": {"hidden": [64, 32]}, "schedule": {"programs": ["Stack_1_2"]}})
    assert cfg.agent.hidden == (64, 32) and cfg.schedule.programs == ("Stack_1_2",)
    cfg = make_config("mario", "asgrl")
    over = merge_overrides(cfg, {"learner": {"diversity": {"k_overrides": {"(has-key)": 5}}}})
    assert over.learner.diversity.k_overrides == (("(has-key)", 5),)  # an object spells the pairs too
    assert config_to_dict(over)["learner"]["diversity"]["k_overrides"] == [["(has-key)", 5]]


def test_ints_are_accepted_for_floats_and_stored_as_floats():
    cfg = merge_overrides(make_config("mario", "asgrl"), {"learner": {"q": {"gamma": 1}}})
    assert cfg.learner.q.gamma == 1.0 and isinstance(cfg.learner.q.gamma, float)


def test_the_learner_union_is_told_apart_by_kind():
    flat = make_config("mario", "goal-q")
    assert isinstance(json_round_trip(flat).learner, FlatConfig)
    data = config_to_dict(make_config("mario", "asgrl"))
    del data["learner"]["kind"]
    with pytest.raises(ConfigError, match=r"^config\.learner: missing field 'kind'"):
        config_from_dict(data)


# -- bad values: (override dict, key path the message starts with, a word of the reason) ----------
TRAIN_BAD = [
    ({"total_steps": True}, "config.total_steps", "expected an int"),  # bool is not an int
    ({"total_steps": "100"}, "config.total_steps", "expected an int"),
    ({"total_steps": 100.0}, "config.total_steps", "expected an int"),
    ({"total_steps": 1.5}, "config.total_steps", "expected an int"),
    ({"total_steps": {"n": 1}}, "config.total_steps", "got an object"),
    ({"total_steps": [1]}, "config.total_steps", "got a list"),
    ({"total_steps": 0}, "config.total_steps", ">= 1"),
    ({"total_steps": -5}, "config.total_steps", ">= 1"),
    ({"seed": -1}, "config.seed", ">= 0"),
    ({"eval_interval": 0}, "config.eval_interval", ">= 1"),
    ({"eval_episodes": 0}, "config.eval_episodes", ">= 1"),
    ({"early_stop_evals": -1}, "config.early_stop_evals", ">= 0"),
    ({"checkpoint_interval": 0}, "config.checkpoint_interval", ">= 1"),
    ({"model": 3}, "config.model", "string"),
    ({"domain": ""}, "config.domain", "non-empty"),
    ({"learner": []}, "config.learner", "expected an object"),
    ({"learner": 7}, "config.learner", "expected an object"),
    ({"learner": {"kind": "deep"}}, "config.learner.kind", "hierarchical"),
    ({"learner": {"q": []}}, "config.learner.q", "expected an object"),
    ({"learner": {"q": {"gamma": float("nan")}}}, "config.learner.q.gamma", "NaN"),
    ({"learner": {"q": {"gamma": json.loads("1e400")}}}, "config.learner.q.gamma", "Infinity"),
    ({"learner": {"q": {"gamma": -math.inf}}}, "config.learner.q.gamma", "finite"),
    ({"learner": {"q": {"gamma": 10**400}}}, "config.learner.q.gamma", "finite"),
    ({"learner": {"q": {"gamma": 0}}}, "config.learner.q.gamma", "(0, 1]"),
    ({"learner": {"q": {"gamma": True}}}, "config.learner.q.gamma", "got true"),
    ({"learner": {"q": {"gamma": "0.9"}}}, "config.learner.q.gamma", "number"),
    ({"learner": {"q": {"epsilon_min": 0.9, "epsilon_start": 0.5}}}, "config.learner.q.epsilon_min", "epsilon_start"),
    ({"learner": {"q": {"epsilon_decay": 0}}}, "config.learner.q.epsilon_decay", "(0, 1]"),
    ({"learner": {"q": {"lr_min": 0}}}, "config.learner.q.lr_min", "(0, 1]"),
    ({"learner": {"q": {"batch_size": 0}}}, "config.learner.q.batch_size", ">= 1"),
    ({"learner": {"q": {"learning_starts": -1}}}, "config.learner.q.learning_starts", ">= 0"),
    ({"learner": {"q": {"random_ties": 1}}}, "config.learner.q.random_ties", "true or false"),
    ({"learner": {"q": {"decay_on": "sucess"}}}, "config.learner.q.decay_on", "did you mean 'success'"),
    ({"learner": {"q": {"gama": 0.9}}}, "config.learner.q", "unknown field 'gama' (did you mean 'gamma'?)"),
    ({"learner": {"diversity": {"k": 0}}}, "config.learner.diversity.k", ">= 1"),
    ({"learner": {"diversity": {"k": 2.0}}}, "config.learner.diversity.k", "expected an int"),
    ({"learner": {"diversity": {"alpha": -0.1}}}, "config.learner.diversity.alpha", ">= 0"),
    ({"learner": {"diversity": {"alpha": 0.5}}}, "config.learner.diversity.alpha", "Eq. 2"),
    ({"learner": {"diversity": {"log_p_min": 0}}}, "config.learner.diversity.log_p_min", "< 0"),
    ({"learner": {"diversity": {"laplace": 0}}}, "config.learner.diversity.laplace", "> 0"),
    ({"learner": {"diversity": {"count_smoothing": -1}}}, "config.learner.diversity.count_smoothing", "> 0"),
    ({"learner": {"diversity": {"grow_below_epsilon": 0}}}, "config.learner.diversity.grow_below_epsilon", "(0, 1]"),
    ({"learner": {"diversity": {"kmeans_buffer": 1}}}, "config.learner.diversity.kmeans_buffer", ">= 2"),
    ({"learner": {"diversity": {"k_overrides": [["(has-key)", 0]]}}},
     "config.learner.diversity.k_overrides[0]", "k >= 1"),
    ({"learner": {"diversity": {"k_overrides": [["(has-key)", True]]}}},
     "config.learner.diversity.k_overrides[0][1]", "expected an int"),
    ({"learner": {"diversity": {"k_overrides": [["(has-key)"]]}}},
     "config.learner.diversity.k_overrides[0]", "2 items"),
    ({"learner": {"diversity": {"k_overrides": [["(has-key)", 2], ["(has-key)", 3]]}}},
     "config.learner.diversity.k_overrides[1]", "twice"),
    ({"learner": {"diversity": {"k_overrides": "(has-key)"}}}, "config.learner.diversity.k_overrides", "list"),
    ({"learner": {"meta": {"lr": 1.5}}}, "config.learner.meta.lr", "(0, 1]"),
    ({"learner": {"meta": {"subgoal_reward": -1}}}, "config.learner.meta.subgoal_reward", ">= 0"),
    ({"learner": {"meta": {"replay_batches": -1}}}, "config.learner.meta.replay_batches", ">= 0"),
    ({"learner": {"meta": {"memory_size": 0}}}, "config.learner.meta.memory_size", ">= 1"),
    ({"learner": {"meta": {"state": "low"}}}, "config.learner.meta.state", "low-level"),
    ({"learner": {"skill_max_steps": 0}}, "config.learner.skill_max_steps", ">= 1"),
    ({"learner": {"subgoals": "plans"}}, "config.learner.subgoals", "did you mean 'plan'"),
    ({"learner": {"nope": 1}}, "config.learner", "unknown field 'nope'"),
    ({"total_step": 10}, "config", "unknown field 'total_step' (did you mean 'total_steps'?)"),
]


@pytest.mark.parametrize(("extra", "path", "reason"), TRAIN_BAD, ids=lambda x: None)
def test_bad_train_values_name_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        merge_overrides(make_config("mario", "asgrl"), extra)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert reason in message
    assert "\n" not in message and "--" not in message  # one line, no CLI flag


def test_bad_flat_values():
    cfg = make_config("mario", "goal-q")
    with pytest.raises(ConfigError, match=r"^config\.learner\.goal_reward: expected a number > 0, got 0"):
        merge_overrides(cfg, {"learner": {"goal_reward": 0}})
    with pytest.raises(ConfigError, match=r"^config\.learner\.episode_max_steps: .*>= 1"):
        merge_overrides(cfg, {"learner": {"episode_max_steps": 0}})
    with pytest.raises(ConfigError, match=r"^config\.learner: unknown field 'diversity'"):
        merge_overrides(cfg, {"learner": {"diversity": {}}})


GOAL_BAD = [
    ({"agent": {"hidden": [64, True]}}, "config.agent.hidden[1]", "expected an int"),
    ({"agent": {"hidden": []}}, "config.agent.hidden", "non-empty"),
    ({"agent": {"hidden": [0]}}, "config.agent.hidden", ">= 1"),
    ({"agent": {"hidden": {"a": 1}}}, "config.agent.hidden", "expected a list"),
    ({"agent": {"gamma": 1.0}}, "config.agent.gamma", "(0, 1)"),
    ({"agent": {"lr_actor": 0}}, "config.agent.lr_actor", "> 0"),
    ({"agent": {"polyak": 1}}, "config.agent.polyak", "[0, 1)"),
    ({"agent": {"action_l2": -1}}, "config.agent.action_l2", ">= 0"),
    ({"agent": {"norm_eps": 0}}, "config.agent.norm_eps", "> 0"),
    ({"agent": {"gama": 0.9}}, "config.agent", "did you mean 'gamma'"),
    ({"agents": {}}, "config", "did you mean 'agent'"),
    ({"replay": {"strategy": "episode"}}, "config.replay.strategy", "future"),
    ({"replay": {"replay_k": -1}}, "config.replay.replay_k", ">= 0"),
    ({"replay": {"buffer_size": 10}}, "config.replay.buffer_size", "schedule.horizon"),
    ({"explore": {"random_eps": 1.5}}, "config.explore.random_eps", "[0, 1]"),
    ({"explore": {"noise_eps": -0.1}}, "config.explore.noise_eps", ">= 0"),
    ({"demos": {"q_weight": 0}}, "config.demos.q_weight", "> 0"),
    ({"demos": {"reset_prob": float("nan")}}, "config.demos.reset_prob", "NaN"),
    ({"demos": {"dagger": "yes"}}, "config.demos.dagger", "true or false"),
    ({"demos": {"episodes": -1}}, "config.demos.episodes", ">= 0"),
    ({"schedule": {"epochs_phase1": 0, "epochs_phase2": 0}}, "config.schedule.epochs_phase2", "at least one epoch"),
    ({"schedule": {"epochs_phase1": True}}, "config.schedule.epochs_phase1", "got true"),
    ({"schedule": {"horizon": 2.5}}, "config.schedule.horizon", "expected an int"),
    ({"schedule": {"anneal_epochs": 0}}, "config.schedule.anneal_epochs", ">= 1 or null"),
    ({"schedule": {"goal_z_tolerance": 0}}, "config.schedule.goal_z_tolerance", "> 0 or null"),
    ({"schedule": {"goal_z_tolerance": json.loads("1e400")}}, "config.schedule.goal_z_tolerance", "Infinity"),
    ({"schedule": {"goal_xy_tolerance": -0.02}}, "config.schedule.goal_xy_tolerance", "> 0 or null"),
    ({"schedule": {"chained_starts": -0.1}}, "config.schedule.chained_starts", "[0, 1]"),
    ({"schedule": {"programs": ["a", "a"]}}, "config.schedule.programs", "distinct"),
    ({"schedule": {"phase1_goals": "program"}}, "config.schedule.phase1_goals", "did you mean"),
    ({"schedule": []}, "config.schedule", "expected an object"),
    ({"preset": 3}, "config.preset", "string"),
]


@pytest.mark.parametrize(("extra", "path", "reason"), GOAL_BAD, ids=lambda x: None)
def test_bad_goal_policy_values_name_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        goal_cfg.from_dict(extra)
    assert str(err.value).startswith(f"{path}: ") and reason in str(err.value)


NPI_BAD = [
    ({"iterations": 0}, "config.iterations", ">= 1"),
    ({"workers": False}, "config.workers", "got false"),
    ({"updates_per_episode": -1}, "config.updates_per_episode", ">= 0"),
    ({"p_buf": 2}, "config.p_buf", "[0, 1]"),
    ({"stop_at_success": 0}, "config.stop_at_success", "(0, 1] or null"),
    ({"programs": "Stack"}, "config.programs", "expected a list"),
    ({"ray_address": "auto"}, "config.ray_address", "backend"),
    ({"backend": "mpi"}, "config.backend", "local"),
    ({"net": {"lr": 0}}, "config.net.lr", "> 0"),
    ({"net": {"lstm_hidden": 0.5}}, "config.net.lstm_hidden", "expected an int"),
    ({"search": {"gamma": 0}}, "config.search.gamma", "(0, 1]"),
    ({"search": {"failure_value": 0}}, "config.search.failure_value", "< 0"),
    ({"search": {"temperature": float("inf")}}, "config.search.temperature", "Infinity"),
    ({"search": {"dirichlet_alpha": 0}}, "config.search.dirichlet_alpha", "> 0"),
    ({"search": {"landmark": "prior", "landmark_weight": 1.5}}, "config.search.landmark_weight", "[0, 1]"),
    ({"search": {"simulation": 3}}, "config.search", "did you mean 'simulations'"),
    ({"episodes": 3}, "config", "unknown field 'episodes'"),
]


@pytest.mark.parametrize(("extra", "path", "reason"), NPI_BAD, ids=lambda x: None)
def test_bad_meta_controller_values_name_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        npi_cfg.from_dict(extra, "config")
    assert str(err.value).startswith(f"{path}: ") and reason in str(err.value)


BEHAVIOUR_BAD = [
    ({"hidden": []}, "config.hidden", "non-empty"),
    ({"epochs": 0}, "config.epochs", ">= 1"),
    ({"lr": -1}, "config.lr", "> 0"),
    ({"held_out": 1.0}, "config.held_out", "(0, 1)"),
    ({"p_reset": 1.5}, "config.p_reset", "[0, 1]"),
    ({"loss": "huber"}, "config.loss", "mse"),
    ({"episodes": "many"}, "config.episodes", "expected an int"),
    ({"epoch": 3}, "config", "did you mean 'epochs'"),
]


@pytest.mark.parametrize(("extra", "path", "reason"), BEHAVIOUR_BAD, ids=lambda x: None)
def test_bad_behaviour_values_name_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        override(BEHAVIOUR_PRESETS["fast"], extra)
    assert str(err.value).startswith(f"{path}: ") and reason in str(err.value)


def test_where_prefixes_every_path():
    with pytest.raises(ConfigError, match=r"^runs/x/config\.json\.learner\.q\.gamma: "):
        config_from_dict(deep_merge(config_to_dict(make_config("mario", "asgrl")), {"learner": {"q": {"gamma": 2}}}),
                         "runs/x/config.json")
    with pytest.raises(ConfigError, match=r"^over\.json: unknown field 'seeds' \(did you mean 'seed'\?\)"):
        merge_overrides(make_config("mario", "asgrl"), {"seeds": 1}, "over.json")
    with pytest.raises(ConfigError, match=r"^config: missing required field 'domain'"):
        config_from_dict({"method": "asgrl", "learner": {"kind": "flat"}})
    with pytest.raises(ConfigError, match=r"^config: expected an object, got null"):
        config_from_dict(None)


def test_direct_construction_checks_name_the_section():
    with pytest.raises(ConfigError, match=r"^q\.gamma: expected a number in \(0, 1\], got true"):
        QConfig(gamma=True)
    with pytest.raises(ConfigError, match=r"^diversity\.k: expected an int >= 1, got 0"):
        DiversityConfig(k=0)
    with pytest.raises(ConfigError, match=r"^total_steps: expected an int >= 1, got true"):
        make_config("mario", "asgrl", total_steps=True)
    with pytest.raises(ConfigError, match=r"^schedule\.chained_starts: "):
        goal_cfg.ScheduleConfig(chained_starts=math.inf)
    with pytest.raises(ConfigError, match=r"^behaviour\.loss: "):
        BehaviourConfig(loss="huber")


def test_to_dict_refuses_what_json_cannot_hold():
    @dataclasses.dataclass(frozen=True)
    class Loose:
        x: float = 0.0

    with pytest.raises(ConfigError, match=r"^config\.x: expected a finite number, got NaN"):
        to_dict(Loose(x=math.nan))
    with pytest.raises(TypeError):
        to_dict(Loose)


def _numeric_leaves(data: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _numeric_leaves(value, (*path, key))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append((*path, key))
    return out


def _nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    for key in reversed(path):
        value = {key: value}
    return value


RANGE_PROBES = (-10**9, -1, 0, 10**9)


@pytest.mark.parametrize("cfg", [make_config("mario", "asgrl"), make_config("mario", "goal-q"), goal_cfg.paper(),
                                 npi_cfg.NPIConfig(), BEHAVIOUR_PRESETS["paper"]], ids=lambda c: type(c).__name__)
def test_every_numeric_field_has_a_range(cfg):
    """No number is unchecked: for each numeric field some of -1e9, -1, 0, 1e9 is refused, naming it."""
    leaves = _numeric_leaves(to_dict(cfg))
    assert len(leaves) > 5
    for path in leaves:
        refused = []
        for probe in RANGE_PROBES:
            try:
                override(cfg, _nest(path, probe))
            except ConfigError as err:
                refused.append(str(err))
        assert refused, f"{'.'.join(path)} accepts {RANGE_PROBES}"
        assert any(m.startswith(".".join(("config", *path)) + ": ") for m in refused), refused


def test_k_overrides_must_name_subgoals_of_the_model():
    """Every shipped per-domain override names a landmark of that domain's model; a typo does not."""
    for domain in DOMAIN_DIVERSITY:
        cfg = make_config(domain, "asgrl")
        names = make_subgoals(cfg, bind_domain(domain).task).names()
        check_subgoals(cfg, names)
        assert all(name in names for name, _ in cfg.learner.diversity.k_overrides)
    cfg = merge_overrides(make_config("mario", "asgrl"),
                          {"learner": {"diversity": {"k_overrides": [["(has-key)", 4], ["(has-kee)", 2]]}}})
    with pytest.raises(ConfigError, match=r"^config\.learner\.diversity\.k_overrides\[1\]: '\(has-kee\)' is not a "
                                          r"landmark .*did you mean '\(has-key\)'"):
        make_subgoals(cfg, bind_domain("mario").task)  # the registry checks them as it derives subgoals
    check_subgoals(make_config("mario", "goal-q"), [])  # flat learners have no overrides


def test_default_learner_refuses_unknown_methods():
    with pytest.raises(ConfigError, match="unknown method"):
        default_learner("ppo")
    assert configio.did_you_mean("gama", ["gamma", "k"]) == " (did you mean 'gamma'?)"
