"""The one plotter: every stage's figure is panels of named series from its metrics rows; end points are bars."""
from __future__ import annotations

from asg.learning.plots import Bars, Panel, plot_bars, plot_curves, series


def test_series_skips_missing_and_non_finite_values_and_reads_csv_strings():
    rows = [{"x": "0", "y": "0.5"}, {"x": 1, "y": ""}, {"x": 2}, {"x": 3, "y": float("nan")}, {"x": "4", "y": 1}]
    assert series(rows, "x", "y") == ([0.0, 4.0], [0.5, 1.0])


def test_plot_curves_writes_one_png_and_leaves_nothing_else(tmp_path):
    rows = [{"env_steps": 10 * i, "success_rate": i / 4, "loss": 1 / (i + 1)} for i in range(5)]
    panels = [Panel("env_steps", ("success_rate",), "steps", ylim=(0, 1), step=True, markers=True),
              Panel("env_steps", ("loss", "absent"), "steps", log_y=True)]
    out = plot_curves(tmp_path / "curves.png", rows, panels, "title", vlines=[20])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["curves.png"]  # the temp file is gone


def test_grouped_bars_write_a_png_that_shows_the_values(tmp_path):
    cats = ("Stack", "Move_To_Zone")
    right = {"right": [Bars("x", [0.5, 0.5], [0.1, 0.1]), Bars("y", [0.2, 0.9], [0.0, 0.0])]}
    a = plot_bars(tmp_path / "a.png", cats, {"left": [Bars("x", [1.0, 0.0], [0.0, 0.0])], **right})
    b = plot_bars(tmp_path / "b.png", cats, {"left": [Bars("x", [0.0, 1.0], [0.0, 0.0])], **right})
    assert a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and a.read_bytes() != b.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]  # no temporary file left
