"""The course colours: one colour per bias category, agent, outcome and system, the same in every chart and in
the span viewer. Keys are normalised names (:func:`norm_name`).

Four hues are reserved in every lesson: **vermillion** is *biased* (verdict, gold label, the Bias agent, loaded
language), **blue** is *neutral*, **black** is *wrong* (a thin black rule is an interval or a trend line) and
**orange** is *yours* (your pair, your simulation) beside grey references. Greys are right, other, no gold or not
measured; everything else uses the remaining Okabe-Ito hues (sky blue, bluish green, yellow, reddish purple), named
by its chart's legend.

>>> color_for("evidence", "agent")
'#009e73'
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import Literal

from mabpd_kit import roster

__all__ = ["AGENT_COLORS", "CATEGORY_COLORS", "EXTRA_COLORS", "OTHER_COLOR", "OKABE_ITO", "OUTCOME_COLORS",
           "SERIES_COLORS", "SYSTEM_COLORS", "color_for", "system_color", "norm_name", "tint"]

#: Okabe & Ito's colour-blind-safe palette (2008): eight colours distinct under protanopia, deuteranopia and
#: tritanopia. Every course colour is one of them or a grey (``tests/test_viz_palette.py`` checks the pairs).
OKABE_ITO: dict[str, str] = {
    "orange": "#e69f00", "sky blue": "#56b4e9", "bluish green": "#009e73", "yellow": "#f0e442",
    "blue": "#0072b2", "vermillion": "#d55e00", "reddish purple": "#cc79a7", "black": "#000000"}
_O = OKABE_ITO

#: The seven taxonomy types of the BiasAgent (SPEC 1.2), then the four meta-categories they roll up into (each in
#: the colour of its most typical member, so the two views agree).
CATEGORY_COLORS: dict[str, str] = {
    "loaded language": _O["vermillion"], "emotional language": _O["reddish purple"], "political labeling": "#555555",
    "framing": _O["sky blue"], "exaggeration": _O["yellow"], "selection": _O["bluish green"], "omission": "#c8c8c8",
    "biased language": _O["vermillion"], "framing bias": _O["sky blue"], "unsupported claims": _O["yellow"],
    "selective presentation": _O["bluish green"]}
_OTHER_AGENTS: dict[str, str] = {"verifier": "#555555", "lexicon": _O["reddish purple"], "judge": _O["blue"],
                                 "politician": _O["orange"], "scientist": _O["sky blue"]}


class _AgentColors(Mapping[str, str]):
    """The MABPD agents' colours, read from the roster when asked (a spare one when its line has none), then the
    verifier's, the lexicon's and the RADAR roles'."""

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


#: Source agents (charts that compare agents, and ``span_html(color_by="agent")``).
AGENT_COLORS: Mapping[str, str] = _AgentColors()
#: MABPD verdicts, RADAR's veracity labels (no verdict colour: a FALSE claim never reads as "biased") and
#: right/wrong (an error is the dark mark).
OUTCOME_COLORS: dict[str, str] = {
    "biased": _O["vermillion"], "neutral": _O["blue"], "TRUE": _O["sky blue"], "HALF-TRUE": _O["yellow"],
    "FALSE": _O["reddish purple"], "correct": "#999999", "right": "#999999", "wrong": _O["black"], "no gold": "#d9d9d9"}
#: Ordered series colours for charts with several measures: Okabe-Ito without biased, neutral and yours.
SERIES_COLORS: tuple[str, ...] = (_O["reddish purple"], _O["bluish green"], _O["sky blue"], _O["yellow"],
                                  "#555555", _O["black"])
#: One colour per system (pipeline configuration), the same in every lesson (see :func:`system_color`).
SYSTEM_COLORS: dict[str, str] = {"full": _O["reddish purple"], "no debate": _O["bluish green"],
                                 "single agent": _O["sky blue"], "no evidence weighting": "#555555"}
OTHER_COLOR = "#8c8c8c"
#: Spare colours for names not listed above, picked by a stable hash of the name (never vermillion: biased).
EXTRA_COLORS = (_O["sky blue"], _O["reddish purple"], _O["bluish green"], _O["yellow"], "#555555")


def _spare(key: str) -> str:
    return EXTRA_COLORS[zlib.crc32(key.encode()) % len(EXTRA_COLORS)]


def norm_name(name: str | None) -> str:
    """A category or agent name as the tables spell it: lower case, "_" and "-" read as spaces."""
    return " ".join((name or "").replace("_", " ").replace("-", " ").lower().split())


def color_for(name: str | None, kind: Literal["category", "agent"] = "category") -> str:
    """The course colour of a category (or meta-category) or of an agent, as ``#rrggbb``; an unknown name gets a
    stable spare colour, ``None``/"other" a grey."""
    key = norm_name(name)
    if not key or key == "other":
        return OTHER_COLOR
    table = AGENT_COLORS if kind == "agent" else CATEGORY_COLORS
    if key in table:
        return table[key]
    return _spare(key)


def system_color(name: str | None) -> str | None:
    """The colour of a system (``"full pipeline"``, ``"no debate"``, ...); None if not a known system."""
    key = norm_name(name).removesuffix(" pipeline").removeprefix("mabpd ")
    return SYSTEM_COLORS.get(key)


def tint(hex_colour: str) -> str:
    """The colour at 35% on white: a light background on which dark text stays readable."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * 0.35) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)
