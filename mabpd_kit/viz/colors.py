"""The course colours: one colour per bias category, agent and outcome, the same in every chart.

Charts (:mod:`mabpd_kit.viz`) and the span viewer (:mod:`mabpd_kit.viz.spans`) both read these
tables, so "loaded language" is the same red in a bar chart, a legend and a highlighted sentence.
Keys are normalised names (lower case, "_" and "-" read as spaces), see :func:`norm_name`.

>>> color_for("loaded_language") == CATEGORY_COLORS["loaded language"]
True
>>> color_for("evidence", "agent")
'#54a24b'
"""

from __future__ import annotations

import zlib
from typing import Literal

__all__ = [
    "AGENT_COLORS",
    "CATEGORY_COLORS",
    "EXTRA_COLORS",
    "OTHER_COLOR",
    "OUTCOME_COLORS",
    "color_for",
    "norm_name",
    "tint",
]

#: The seven taxonomy types of the BiasAgent (SPEC 1.2) and the four meta-categories they roll up
#: into. Meta-categories reuse the colour of their most typical member so the two views agree.
CATEGORY_COLORS: dict[str, str] = {
    # taxonomy types
    "loaded language": "#e45756",
    "emotional language": "#f58518",
    "political labeling": "#b279a2",
    "framing": "#4c78a8",
    "exaggeration": "#d6a700",
    "selection": "#54a24b",
    "omission": "#72b7b2",
    # meta-categories
    "biased language": "#e45756",
    "framing bias": "#4c78a8",
    "unsupported claims": "#d6a700",
    "selective presentation": "#54a24b",
}
#: Source agents (charts that compare agents, and ``span_html(color_by="agent")``).
AGENT_COLORS: dict[str, str] = {
    "bias": "#e45756",
    "evidence": "#54a24b",
    "framing": "#4c78a8",
    "verifier": "#9d755d",
    "lexicon": "#b279a2",
    "judge": "#4c78a8",
    "politician": "#f58518",
    "scientist": "#54a24b",
}
#: Decisions and gold labels: MABPD verdicts and RADAR's three labels, the same in every chart.
OUTCOME_COLORS: dict[str, str] = {
    "biased": "#e45756",
    "neutral": "#4c78a8",
    "TRUE": "#54a24b",
    "HALF-TRUE": "#f58518",
    "FALSE": "#e45756",
}
OTHER_COLOR = "#8c8c8c"
#: Used, in a fixed order picked by a stable hash of the name, for categories not listed above.
EXTRA_COLORS = ("#ff9da6", "#9ecae9", "#88d27a", "#fdbf6f", "#bab0ac", "#d67195", "#439894", "#8f6d31")


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
    return EXTRA_COLORS[zlib.crc32(key.encode()) % len(EXTRA_COLORS)]


def tint(hex_colour: str, strength: float = 0.35) -> str:
    """Mix a colour with white: a light background on which dark text stays readable."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * strength) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)
