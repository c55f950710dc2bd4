"""The course colours stay distinguishable for colour-blind readers.

A documented computation, no extra dependency: each colour is converted to linear RGB, passed
through the colour-vision-deficiency matrices of Machado, Oliveira & Fernandes (2009, "A
physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6), severity
1.0: full protanopia / deuteranopia), then to CIELAB (D65), and the Euclidean distance (CIE76 ΔE)
between every pair of colours that share a chart must stay above ``MIN_DELTA_E``. For scale: ΔE ≈ 2
is a just-noticeable difference; the course's previous red/green pair (#e45756 / #54a24b) drops to
ΔE 1.7 under deuteranopia, which this test rejects.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mabpd_kit.viz import colors

PROTANOPIA = np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]])
DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]])
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
D65 = np.array([0.95047, 1.0, 1.08883])
MIN_DELTA_E = 15.0


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = SRGB_TO_XYZ @ np.clip(linear_rgb, 0, 1) / D65
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, cvd: np.ndarray | None = None) -> float:
    """CIE76 colour difference of two ``#rrggbb`` colours, as seen with the simulated deficiency ``cvd``."""
    la, lb = _linear(a), _linear(b)
    if cvd is not None:
        la, lb = cvd @ la, cvd @ lb
    return float(np.linalg.norm(_lab(la) - _lab(lb)))


# colours that appear together in one chart or one span viewer
GROUPS = {
    "taxonomy types": [colors.CATEGORY_COLORS[k] for k in ("loaded language", "emotional language", "political labeling",
                                                           "framing", "exaggeration", "selection", "omission")],
    "meta-categories": [colors.CATEGORY_COLORS[k] for k in ("biased language", "framing bias", "unsupported claims",
                                                            "selective presentation")],
    "MABPD agents": [colors.AGENT_COLORS[k] for k in ("bias", "evidence", "framing")],
    "RADAR roles": [colors.AGENT_COLORS[k] for k in ("politician", "scientist", "judge")],
    "verdicts": [colors.OUTCOME_COLORS[k] for k in ("biased", "neutral")],
    "RADAR labels": [colors.OUTCOME_COLORS[k] for k in ("TRUE", "HALF-TRUE", "FALSE")],
    "right / wrong": [colors.OUTCOME_COLORS[k] for k in ("correct", "wrong", "no gold")],
    "series": list(colors.SERIES_COLORS[:5]),
    "systems": list(colors.SYSTEM_COLORS.values()),
    "stop chart (state at round 1)": list(__import__("mabpd_kit.viz.pipeline", fromlist=["ROUND1_COLORS"]).ROUND1_COLORS.values()),
    "LLM vote chart": list(__import__("mabpd_kit.viz.llm_labels", fromlist=["ROLE_COLORS"]).ROLE_COLORS.values()),
}


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.parametrize(("vision", "matrix"), [("typical", None), ("protanopia", PROTANOPIA), ("deuteranopia", DEUTERANOPIA)])
def test_colours_that_share_a_chart_stay_apart(group: str, vision: str, matrix):
    worst = min(((delta_e(a, b, matrix), a, b) for a, b in itertools.combinations(GROUPS[group], 2)))
    assert worst[0] >= MIN_DELTA_E, f"{group}: {worst[1]} and {worst[2]} are ΔE {worst[0]:.1f} apart with {vision}"


def test_the_simulation_catches_red_against_green():
    assert delta_e("#e45756", "#54a24b") > 50
    assert delta_e("#e45756", "#54a24b", DEUTERANOPIA) < 5, "red/green collapses for deuteranopes"


def test_every_course_colour_is_okabe_ito_or_grey():
    allowed = set(colors.OKABE_ITO.values())
    for table in (colors.CATEGORY_COLORS, colors.AGENT_COLORS, colors.OUTCOME_COLORS):
        for name, c in table.items():
            r, g, b = (int(c[i : i + 2], 16) for i in (1, 3, 5))
            assert c in allowed or r == g == b, f"{name}: {c} is neither Okabe-Ito nor grey"


def test_vermillion_means_biased_and_nothing_else():
    """One meaning per colour across the lessons: vermillion is the biased verdict/label, the Bias agent and the
    words it cites as bias; a FALSE claim, a wrong answer, a changed label, a series or 'yours' never use it."""
    from mabpd_kit.viz import identity, llm_labels, pipeline, stopping

    vermillion = colors.OKABE_ITO["vermillion"]
    assert [k for k, c in colors.OUTCOME_COLORS.items() if c == vermillion] == ["biased"]
    assert [k for k, c in colors.CATEGORY_COLORS.items() if c == vermillion] == ["loaded language", "biased language"]
    assert [k for k in colors.AGENT_COLORS if colors.AGENT_COLORS[k] == vermillion] == ["bias"]
    others = [*colors.SERIES_COLORS, *colors.EXTRA_COLORS, *stopping.CHANGE_COLORS.values(), *stopping._MARK_COLORS,
              *pipeline.ROUND1_COLORS.values(), *llm_labels.ROLE_COLORS.values(), identity.YOURS_COLOR,
              *identity.RECOVERY_COLORS.values(), *identity.CONDITION_COLORS.values()]
    assert vermillion not in others
    assert colors.OUTCOME_COLORS["wrong"] == "#000000" and colors.OUTCOME_COLORS["FALSE"] != vermillion


def test_systems_and_categories_never_take_the_verdict_or_yours_hues():
    """Blue is neutral and orange is yours in every lesson: no category, system, series or stop reason uses them,
    and a system has one colour however a lesson spells it."""
    from mabpd_kit.viz import pipeline, simulator

    reserved = {colors.OKABE_ITO["blue"], colors.OKABE_ITO["orange"]}
    used = [*colors.CATEGORY_COLORS.values(), *colors.SYSTEM_COLORS.values(), *colors.SERIES_COLORS,
            *colors.EXTRA_COLORS, *pipeline.STOP_REASON_COLORS.values(), *simulator.CONFIG_COLORS.values()]
    assert not reserved & set(used)
    assert colors.system_color("full pipeline") == colors.system_color("full") == simulator.CONFIG_COLORS["full"]
    assert colors.system_color("no debate") == simulator.CONFIG_COLORS["no-debate"]
    assert colors.system_color("a name that is no system") is None
