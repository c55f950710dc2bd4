"""The span viewer: a text with what the agents highlighted, coloured per bias category, as self-contained
HTML with inline styles (no script, no altair), so it works in JupyterLab, an HTML export or an e-mail."""

from __future__ import annotations

import html as _html
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mabpd_kit.types import Span
from mabpd_kit.viz.colors import color_for, norm_name, tint

if TYPE_CHECKING:
    from IPython.display import HTML

__all__ = ["ColorBy", "show_spans", "span_html"]

ColorBy = Literal["category", "meta_category", "agent"]

_BOX = ("font-family:Georgia,'Times New Roman',serif;font-size:15px;line-height:1.9;color:#1a1a1a;"
        "background:#ffffff;border:1px solid #dddddd;border-radius:6px;padding:10px 14px;margin:4px 0;")
_SMALL = "font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:1.5;color:#333333;"


@dataclass(frozen=True)
class _Placed:
    """A span with the offsets it is drawn at (``None`` when it cannot be placed in the text)."""
    span: Span
    start: int | None
    end: int | None
    where: str  # "offsets", "found" (located by its text) or why it could not be placed


def _label(span: Span, color_by: ColorBy) -> str:
    name = {"agent": span.agent, "meta_category": span.meta_category}.get(color_by, span.taxonomy or span.category)
    return norm_name(name) or "other"


def _place(text: str, span: Span, use_orig: bool) -> _Placed:
    start, end = (span.orig_start, span.orig_end) if use_orig else (span.start, span.end)
    if start is not None and end is not None:
        if 0 <= start < end <= len(text):
            return _Placed(span, start, end, "offsets")
        return _Placed(span, None, None, f"offsets {start}..{end} outside the text (length {len(text)})")
    if span.valid and span.text:
        # Hand-made spans often carry no offsets: locate the first exact occurrence.
        at = text.find(span.text)
        if at >= 0:
            return _Placed(span, at, at + len(span.text), "found")
    return _Placed(span, None, None, "no offsets" if span.valid else "not found in the text")


def _tooltip(span: Span) -> str:
    parts = [f"{span.agent} agent", norm_name(span.taxonomy or span.category) or "other"]
    if span.meta_category:
        parts[-1] += f" ({norm_name(span.meta_category)})"
    parts += [f"score {span.score:.2f}", "valid" if span.valid else "INVALID: never counts as evidence"]
    line = " · ".join(parts)
    extra = "; ".join(x for x in (span.reason, span.note) if x and not (x == span.note and x in (span.reason or "")))
    return f"{line}\n{extra}" if extra else line


def span_html(text: str, spans: Sequence[Span], legend: bool = True, title: str | None = None, *,
              color_by: ColorBy = "category", use_orig: bool = False) -> str:
    """``text`` with ``spans`` highlighted, as self-contained HTML.

    Colour by taxonomy (else category), or ``color_by`` meta_category or agent, with a legend and a tooltip per
    highlight. Invalid spans are struck through; ``use_orig=True`` uses the raw input's offsets."""
    placed = [_place(text, s, use_orig) for s in spans]
    inline = [p for p in placed if p.start is not None]
    unplaced = [p for p in placed if p.start is None]
    kind = "agent" if color_by == "agent" else "category"
    out = [f'<div class="mabpd-spans" style="{_BOX}">']
    if title:
        out.append(f'<div style="{_SMALL}font-weight:bold;font-size:13px;margin-bottom:4px;">{_html.escape(title)}</div>')
    out.append(f'<div style="white-space:pre-wrap;">{"".join(_pieces(text, inline, color_by, kind))}</div>')
    if unplaced:
        out.append(_unplaced_html(unplaced))
    if legend:
        out.append(_legend_html(placed, color_by, kind))
    out.append("</div>")
    return "".join(out)


def _pieces(text: str, inline: list, color_by: ColorBy, kind: str) -> list[str]:
    """The text cut at every span boundary; each piece styled by the spans that cover it."""
    cuts = sorted({0, len(text), *(p.start for p in inline), *(p.end for p in inline)})  # type: ignore[misc]
    pieces: list[str] = []
    for a, b in zip(cuts, cuts[1:]):
        chunk = _html.escape(text[a:b])
        cover = [p for p in inline if p.start <= a and b <= p.end]  # type: ignore[operator]
        if not cover:
            pieces.append(chunk)
            continue
        valid = sorted((p for p in cover if p.span.valid), key=lambda p: -p.span.score)
        tip = _html.escape("\n".join(_tooltip(p.span) for p in cover), quote=True)
        if valid:
            main = color_for(_label(valid[0].span, color_by), kind)
            style = f"background:{tint(main)};border-bottom:2px solid {main};padding:1px 0;border-radius:2px;"
            if len(valid) > 1:
                style += f"box-shadow:inset 0 -4px 0 {color_for(_label(valid[1].span, color_by), kind)};"
            if len(valid) < len(cover):
                style += "text-decoration:line-through;"
        else:
            style = "text-decoration:line-through;text-decoration-color:#c0392b;border-bottom:1px dashed #c0392b;"
        pieces.append(f'<span style="{style}color:#1a1a1a;" title="{tip}">{chunk}</span>')
    return pieces


def _unplaced_html(unplaced: list) -> str:
    """The spans cited but not located in the text, listed under it."""
    out = [f'<div style="{_SMALL}margin-top:8px;border-top:1px solid #eeeeee;padding-top:4px;">',
           "<b>Cited but not located in the text</b> (never counted as evidence):<ul style='margin:2px 0;'>"]
    for p in unplaced:
        tip = _html.escape(_tooltip(p.span), quote=True)
        deco = "text-decoration:line-through;" if not p.span.valid else ""
        out.append(f'<li><span style="{deco}" title="{tip}">&ldquo;{_html.escape(p.span.text)}&rdquo;</span> '
                   f"<i>({_html.escape(p.span.agent)}: {_html.escape(p.where)})</i></li>")
    out.append("</ul></div>")
    return "".join(out)


def _legend_html(placed: list, color_by: ColorBy, kind: str) -> str:
    """One chip per label of the valid spans (with counts), and one for the struck-through invalid ones."""
    counts = Counter(_label(p.span, color_by) for p in placed if p.span.valid)
    n_invalid = sum(not p.span.valid for p in placed)
    chip = '<span style="display:inline-block;margin:2px 10px 2px 0;white-space:nowrap;">'
    chips = [f'{chip}<span style="display:inline-block;width:12px;height:12px;background:{tint(color_for(lab, kind))};'
             f'border-bottom:2px solid {color_for(lab, kind)};vertical-align:middle;margin-right:4px;"></span>'
             f"{_html.escape(lab)} ({n})</span>" for lab, n in counts.items()]
    if n_invalid:
        chips.append(f'{chip}<span style="text-decoration:line-through;text-decoration-color:#c0392b;">struck through'
                     f"</span> = invalid span ({n_invalid})</span>")
    if not chips:
        chips.append("<i>no spans</i>")
    return f'<div style="{_SMALL}margin-top:6px;">{"".join(chips)}</div>'


def show_spans(text: str, spans: Sequence[Span], *args: Any, **kwargs: Any) -> HTML:
    """:func:`span_html` (same arguments) wrapped for display: the last line of a notebook cell."""
    from IPython.display import HTML
    return HTML(span_html(text, spans, *args, **kwargs))
