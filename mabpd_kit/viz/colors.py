"""The course colours: one colour per bias category, agent and outcome, the same in every chart.

Charts (:mod:`mabpd_kit.viz`) and the span viewer (:mod:`mabpd_kit.viz.spans`) both read these
tables, so "loaded language" is the same vermillion in a bar chart, a legend and a highlighted sentence.

Four hues are reserved in every lesson:

- **vermillion** is *biased*: the biased verdict or gold label, the Bias agent, and loaded / biased
  language, the category of words the Bias agent cites as bias. Never an error, a FALSE claim or a change.
- **blue** is *neutral* (the neutral verdict or gold label) and nothing else.
- **black** is *wrong* (a bar or point whose label does not match gold); a thin black rule is an
  interval or a trend line.
- **orange** marks *yours* (your pair, your simulation, your choice) beside grey reference values, and
  nothing else.

Greys are *right*, *other*, *no gold* or *not measured*. Everything else (the other bias categories,
agents, stop reasons, conditions) uses the remaining Okabe-Ito hues (sky blue, bluish green, yellow,
reddish purple) or greys, and its chart's legend names it: with four hues left, one of them can mean a
category in one chart and a condition in another, never a verdict or "yours". A system has one colour in
every lesson (:data:`SYSTEM_COLORS`: full pipeline reddish purple, no debate bluish green, single agent
sky blue).
Keys are normalised names (lower case, "_" and "-" read as spaces), see :func:`norm_name`.

>>> color_for("loaded_language") == CATEGORY_COLORS["loaded language"]
True
>>> color_for("evidence", "agent")
'#009e73'
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import Literal

from mabpd_kit import roster

__all__ = [
    "AGENT_COLORS",
    "CATEGORY_COLORS",
    "EXTRA_COLORS",
    "OTHER_COLOR",
    "OKABE_ITO",
    "OUTCOME_COLORS",
    "SERIES_COLORS",
    "SYSTEM_COLORS",
    "color_for",
    "system_color",
    "norm_name",
    "tint",
]

#: Okabe & Ito's colour-blind-safe palette (Okabe, Ito 2008, "Color Universal Design"): eight colours
#: that stay distinct under protanopia, deuteranopia and tritanopia. Every course colour below is one
#: of them (or grey), so no chart relies on telling red from green. ``tests/test_viz_palette.py``
#: simulates protanopia and deuteranopia (Machado et al. 2009, severity 1) and checks the colour
#: distance (CIELAB) between every pair that shares a chart.
OKABE_ITO: dict[str, str] = {
    "orange": "#e69f00",
    "sky blue": "#56b4e9",
    "bluish green": "#009e73",
    "yellow": "#f0e442",
    "blue": "#0072b2",
    "vermillion": "#d55e00",
    "reddish purple": "#cc79a7",
    "black": "#000000",
}
_O = OKABE_ITO

#: The seven taxonomy types of the BiasAgent (SPEC 1.2) and the four meta-categories they roll up
#: into. Meta-categories reuse the colour of their most typical member so the two views agree.
CATEGORY_COLORS: dict[str, str] = {
    # taxonomy types
    "loaded language": _O["vermillion"],
    "emotional language": _O["reddish purple"],
    "political labeling": "#555555",
    "framing": _O["sky blue"],
    "exaggeration": _O["yellow"],
    "selection": _O["bluish green"],
    "omission": "#c8c8c8",
    # meta-categories
    "biased language": _O["vermillion"],
    "framing bias": _O["sky blue"],
    "unsupported claims": _O["yellow"],
    "selective presentation": _O["bluish green"],
}
_OTHER_AGENTS: dict[str, str] = {
    "verifier": "#555555",
    "lexicon": _O["reddish purple"],
    "judge": _O["blue"],
    "politician": _O["orange"],
    "scientist": _O["sky blue"],
}


class _AgentColors(Mapping[str, str]):
    """The MABPD agents' colours, read from the roster (:mod:`mabpd_kit.roster`) when asked, then the
    verifier's, the lexicon's and the RADAR roles'. An agent whose roster line has no colour gets a
    stable spare one (:data:`EXTRA_COLORS`, by a hash of its name)."""

    def _mabpd(self) -> dict[str, str]:
        return {norm_name(s.name): s.color or _spare(norm_name(s.name)) for s in roster.specs()}

    def __getitem__(self, name: str) -> str:
        got = self._mabpd().get(name)
        return got if got is not None else _OTHER_AGENTS[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self._mabpd(), **_OTHER_AGENTS})

    def __len__(self) -> int:
        return len({**self._mabpd(), **_OTHER_AGENTS})

    def __repr__(self) -> str:
        return repr(dict(self))


#: Source agents (charts that compare agents, and ``span_html(color_by="agent")``). The three MABPD
#: agents (their roster lines' colours) and the three RADAR roles are each three clearly different
#: Okabe-Ito colours.
AGENT_COLORS: Mapping[str, str] = _AgentColors()
#: Decisions, gold labels and outcomes, the same in every chart: MABPD verdicts (biased vermillion,
#: neutral blue), RADAR's three veracity labels (sky blue, yellow, reddish purple: no verdict or "yours"
#: colour, so a FALSE claim never reads as "biased"), right/wrong (grey against black: an error is the dark mark).
OUTCOME_COLORS: dict[str, str] = {
    "biased": _O["vermillion"],
    "neutral": _O["blue"],
    "TRUE": _O["sky blue"],
    "HALF-TRUE": _O["yellow"],
    "FALSE": _O["reddish purple"],
    "correct": "#999999",
    "right": "#999999",
    "wrong": _O["black"],
    "no gold": "#d9d9d9",
}
#: Ordered series colours for charts with several measures (metrics, conditions, systems): Okabe-Ito,
#: without vermillion, blue and orange (biased, neutral, yours).
SERIES_COLORS: tuple[str, ...] = (_O["reddish purple"], _O["bluish green"], _O["sky blue"], _O["yellow"],
                                  "#555555", _O["black"])
#: One colour per system (pipeline configuration), the same in every lesson and chart; keys are
#: normalised names (see :func:`system_color`). None of them is an outcome or "yours" colour.
SYSTEM_COLORS: dict[str, str] = {
    "full": _O["reddish purple"],
    "no debate": _O["bluish green"],
    "single agent": _O["sky blue"],
    "no evidence weighting": "#555555",
}
OTHER_COLOR = "#8c8c8c"
#: Used, in a fixed order picked by a stable hash of the name, for categories not listed above: the
#: Okabe-Ito colours again, in a different order (a name outside the tables is rarely next to all of them),
#: without vermillion (it means "biased").
EXTRA_COLORS = (_O["sky blue"], _O["reddish purple"], _O["bluish green"], _O["yellow"], "#555555")


def _spare(key: str) -> str:
    return EXTRA_COLORS[zlib.crc32(key.encode()) % len(EXTRA_COLORS)]


def norm_name(name: str | None) -> str:
    """A category or agent name as the tables spell it: lower case, "_" and "-" read as spaces."""
    return " ".join((name or "").replace("_", " ").replace("-", " ").lower().split())


def color_for(name: str | None, kind: Literal["category", "agent"] = "category") -> str:
    """The course colour of a category (or meta-category) or of an agent, as ``#rrggbb``.

    Unknown names get a stable colour from a spare palette (the same name, the same colour,
    in every run), and ``None``/"other" a neutral grey.
    """
    key = norm_name(name)
    if not key or key == "other":
        return OTHER_COLOR
    table = AGENT_COLORS if kind == "agent" else CATEGORY_COLORS
    if key in table:
        return table[key]
    return _spare(key)


def system_color(name: str | None) -> str | None:
    """The colour of a system (pipeline configuration), the same in every lesson; None if not a known system.

    >>> system_color("full pipeline") == system_color("full") == SYSTEM_COLORS["full"]
    True
    """
    key = norm_name(name).removesuffix(" pipeline").removeprefix("mabpd ")
    return SYSTEM_COLORS.get(key)


def tint(hex_colour: str, strength: float = 0.35) -> str:
    """Mix a colour with white: a light background on which dark text stays readable."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * strength) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)
