"""mabpd_kit.widgets, headless: set widget values the way a student would and check the redraw."""

from __future__ import annotations

import ipywidgets as w
import pandas as pd
import pytest

import mabpd_kit.viz as viz
from mabpd_kit.widgets import ParameterPanel, make_control, track

SCORES = pd.DataFrame({"category": ["loaded language", "framing", "omission", "selection"], "score": [0.9, 0.6, 0.4, 0.7]})


def flagged(threshold=0.5, category="all"):
    """A plain function, as notebooks write them: returns (chart, caption)."""
    df = SCORES[SCORES.score >= threshold]
    if category != "all":
        df = df[df.category == category]
    return viz.bar(df, "category", "score", color="category"), f"{len(df)} at or above {threshold:.2f}"


def _svg(panel: ParameterPanel) -> str:
    (out,) = panel.output.outputs
    return out["data"]["image/svg+xml"]


def _categories(panel: ParameterPanel) -> list[str]:
    (rows,) = panel.result.to_dict()["datasets"].values()
    return [r["category"] for r in rows]


def test_defaults_already_show_a_chart_and_caption():
    panel = ParameterPanel(flagged, {"threshold": (0.0, 1.0, 0.05)}, title="Floor")
    slider = panel.controls["threshold"]
    assert isinstance(slider, w.FloatSlider) and slider.value == 0.5 and not slider.continuous_update
    assert panel.runs == 1 and panel.error is None
    assert panel.caption == "3 at or above 0.50" and panel.caption_widget.value == "3 at or above 0.50"
    assert "<svg" in _svg(panel) and "loaded language" in _svg(panel)
    assert _categories(panel) == ["loaded language", "framing", "selection"]


def test_moving_a_slider_reruns_and_redraws():
    panel = ParameterPanel(flagged, {"threshold": (0.0, 1.0, 0.05), "category": ["all", "framing"]})
    before_spec, before_svg = panel.result.to_dict(), _svg(panel)
    panel.controls["threshold"].value = 0.8
    assert panel.runs == 2 and panel.values == {"threshold": 0.8, "category": "all"}
    assert panel.caption == "1 at or above 0.80"
    assert panel.result.to_dict() != before_spec and _svg(panel) != before_svg
    assert _categories(panel) == ["loaded language"]
    panel.set(threshold=0.0, category="framing")
    assert panel.runs == 4 and panel.caption == "1 at or above 0.00"
    assert len(panel.output.outputs) == 1, "each redraw replaces the chart, never stacks them"


def test_failure_is_shown_and_keeps_the_last_chart():
    def fragile(k=1):
        if k > 2:
            raise ValueError("k must be at most 2")
        return viz.bar(SCORES.head(k), "category", "score"), f"k={k}"

    panel = ParameterPanel(fragile, {"k": (1, 4, 1)})
    assert isinstance(panel.controls["k"], w.IntSlider)
    good = _svg(panel)
    panel.set(k=3)
    assert panel.error == "ValueError: k must be at most 2"
    assert "k must be at most 2" in panel.caption_widget.value and "k=3" in panel.caption_widget.value
    assert _svg(panel) == good
    panel.set(k=2)
    assert panel.error is None and panel.caption == "k=2" and _svg(panel) != good


def test_wrong_names_fail_early_with_clear_errors():
    with pytest.raises(TypeError, match="no argument"):
        ParameterPanel(flagged, {"treshold": (0.0, 1.0, 0.1)})
    with pytest.raises(ValueError, match="at least one control"):
        ParameterPanel(flagged, {})
    panel = ParameterPanel(flagged, {"threshold": (0.0, 1.0, 0.1)})
    with pytest.raises(KeyError, match="threshold"):
        panel.set(thresh=0.3)


def test_make_control_specs():
    assert isinstance(make_control("on", True), w.Checkbox)
    dd = make_control("c", ["a", "b"], default="b")
    assert isinstance(dd, w.Dropdown) and dd.value == "b"
    s = make_control("x", (0.0, 1.0, 0.01, 0.3))
    assert isinstance(s, w.FloatSlider) and s.value == 0.3 and s.readout_format == ".2f"
    ready = w.IntText(value=7)
    assert make_control("n", ready) is ready
    with pytest.raises(TypeError, match="min, max, step"):
        make_control("bad", {"min": 0})


def test_caption_only_and_chart_only_returns():
    text_panel = ParameterPanel(lambda n=2: f"n is {n}", {"n": (0, 5, 1)})
    assert text_panel.caption == "n is 2" and text_panel.output.outputs == ()
    chart_panel = ParameterPanel(lambda t=0.5: flagged(t)[0], {"t": (0.0, 1.0, 0.1)})
    assert chart_panel.caption == "" and "<svg" in _svg(chart_panel)


def test_mimebundle_has_live_widget_and_static_snapshot():
    panel = ParameterPanel(flagged, {"threshold": (0.0, 1.0, 0.05)})
    bundle = panel._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.widget.model_id
    snap = bundle["text/html"]
    assert "threshold=0.5" in snap and "3 at or above 0.50" in snap and "<svg" in snap


def test_track_prints_summary(capsys):
    assert list(track(range(4), desc="scoring", disable=True)) == [0, 1, 2, 3]
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("scoring: 4 of 4 items in ") and line.endswith("item/s)")
    for i in track([1, 2, 3, 4, 5], desc="debate", disable=True, unit="round"):
        if i == 2:
            break
    assert capsys.readouterr().out.strip().endswith("(stopped early)")
    list(track((x for x in range(3)), desc="gen", disable=True))
    assert capsys.readouterr().out.startswith("gen: 3 items in ")


def test_simulator_panel_redraws_with_the_planted_setting():
    from mabpd_kit.widgets import simulator_panel

    panel = simulator_panel(n_items=150)
    assert panel.error is None and set(panel.controls) == {"hallucination", "competence", "correlation", "calibration"}
    assert "macro F1 full" in panel.caption and "planted 0.00" in panel.caption
    assert panel.caption.endswith("n = 150 simulated items")   # a score on simulated items says how many
    spec = panel.result.to_dict()
    assert spec["title"].startswith("Simulated agents") and spec.get("description")
    panel.set(hallucination=0.3)
    assert panel.error is None and "planted 0.30" in panel.caption
    gap = panel.caption.split(":")[1].split(";")[0]
    assert "higher than" in gap and "points -" not in gap and " -" not in gap, "differences in words, no minus sign"


def _llm_table(n=600, seed=0):
    """Four invented 'models' with known error rates on a balanced gold column (no benchmark data)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n)
    table = pd.DataFrame({"id": [f"s{i}" for i in range(n)], "text": "t", "gold": gold})
    for name, rate in (("gpt_4", 0.1), ("gpt_3_5", 0.2), ("mixtral_8x7b", 0.2), ("falcon_7b", 0.4)):
        table[name] = np.where(rng.random(n) < rate, 1 - gold, gold)
    return table


def test_llm_vote_panel_shows_the_vote_with_its_interval_and_follows_the_choice():
    from mabpd_kit.evaluate.llm_labels import vote_score
    from mabpd_kit.widgets import llm_vote_panel

    table = _llm_table()
    panel = llm_vote_panel(table, n_resamples=200, seed=0)
    assert panel.values["voters"] == ("gpt_4", "gpt_3_5", "mixtral_8x7b") and panel.error is None
    want = vote_score(table, ["gpt_4", "gpt_3_5", "mixtral_8x7b"], n_resamples=200, seed=0).iloc[0]
    assert f"macro F1 {want.macro_f1:.3f} [{want.lo:.3f}, {want.hi:.3f}]" in panel.caption
    assert "best of them alone, gpt_4" in panel.caption
    assert list(panel.controls["voters"].options)[0] == "gpt_4"            # listed best first: ties go to the strongest
    panel.set(voters=("gpt_3_5", "falcon_7b", "mixtral_8x7b"))
    assert "best of them alone, gpt_3_5" in panel.caption
    panel.set(voters=("gpt_4",))
    assert panel.result is None and "at least two voters" in panel.caption and panel.error is None


def test_static_snapshot_lists_a_tuple_value_without_its_repr():
    """A viewer without a kernel reads 'voters: a, b, c', never "voters=('a', 'b', 'c')" (review40f, cell 58)."""
    from mabpd_kit.widgets import _fmt

    assert _fmt({"voters": ("gpt_4", "gpt_3_5", "mixtral_8x7b")}) == "voters: gpt_4, gpt_3_5, mixtral_8x7b"
    assert _fmt({"threshold": 0.5, "k": 3}) == "threshold=0.5, k=3"
