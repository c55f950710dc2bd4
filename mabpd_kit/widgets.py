"""Small interactive pieces for the notebooks: :class:`ParameterPanel` (controls bound to a plain function's
arguments) and :func:`track` (a progress bar that leaves one summary line)."""

from __future__ import annotations

import html as _html
import inspect
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

__all__ = ["ParameterPanel", "llm_vote_panel", "make_control", "simulator_panel", "track"]

T = TypeVar("T")

#: A control spec: ``(min, max, step[, value])`` -> slider (int or float from the numbers' types), a list of
#: options -> drop-down, a bool -> check box, or any ready-made ipywidgets value widget.
ControlSpec = Any


def make_control(name: str, spec: ControlSpec, default: Any = inspect.Parameter.empty) -> Any:
    """One ipywidgets control from a short spec (see ``ControlSpec``); ``default`` sets its start value."""
    import ipywidgets as w
    has_default = default is not inspect.Parameter.empty
    style = {"description_width": "initial"}
    if isinstance(spec, w.ValueWidget):
        if has_default and spec.value is None:
            spec.value = default
        return spec
    if isinstance(spec, bool):
        return w.Checkbox(value=default if has_default else spec, description=name, style=style)
    if isinstance(spec, tuple) and len(spec) in (3, 4) and all(isinstance(x, (int, float)) for x in spec):
        lo, hi, step = spec[:3]
        value = spec[3] if len(spec) == 4 else (default if has_default else lo)
        is_int = all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi, step, value))
        cls = w.IntSlider if is_int else w.FloatSlider
        kw: dict[str, Any] = {} if is_int else {"readout_format": _readout(step)}
        return cls(value=value, min=lo, max=hi, step=step, description=name, continuous_update=False, style=style, **kw)
    if isinstance(spec, (list, tuple)) and spec:
        options = list(spec)
        value = default if has_default and default in options else options[0]
        return w.Dropdown(options=options, value=value, description=name, style=style)
    raise TypeError(f"control {name!r}: use (min, max, step[, value]) for a slider, a list for a drop-down, "
                    f"a bool for a check box, or an ipywidgets widget; got {spec!r}")


def _readout(step: float) -> str:
    """Slider readout with as many decimals as the step has (0.05 -> '.2f', 1.0 -> '.0f')."""
    decimals = len(f"{step:.6f}".rstrip("0").split(".")[1])
    return f".{decimals}f"


class ParameterPanel:
    """Controls bound to ``fn``'s keyword arguments (``controls``: name -> ControlSpec); every change re-runs ``fn``
    (which returns a chart, ``(chart, caption)`` or a caption) and redraws. After each run: ``result``, ``caption``,
    ``runs`` and ``error``; a failure is shown under the controls and keeps the last good chart."""

    def __init__(self, fn: Callable[..., Any], controls: Mapping[str, ControlSpec], *, title: str | None = None):
        import ipywidgets as w

        from mabpd_kit.viz import altair
        altair()  # the course theme and offline renderer, also for charts the function builds itself
        if not controls:
            raise ValueError("a ParameterPanel needs at least one control")
        params = inspect.signature(fn).parameters
        unknown = [n for n in controls if n not in params and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())]
        if unknown:
            raise TypeError(f"{getattr(fn, '__name__', fn)!r} has no argument(s) {unknown}")
        self.fn = fn
        self.controls: dict[str, Any] = {
            name: make_control(name, spec, params[name].default if name in params else inspect.Parameter.empty)
            for name, spec in controls.items()
        }
        self.output = w.Output()
        self.caption_widget = w.HTML()
        header = [w.HTML(f"<b>{_html.escape(title)}</b>")] if title else []
        self.widget = w.VBox([*header, *self.controls.values(), self.caption_widget, self.output])
        self.result: Any = None
        self.caption: str = ""
        self.error: str | None = None
        self.runs = 0
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control, by argument name."""
        return {name: c.value for name, c in self.controls.items()}

    def set(self, **values: Any) -> None:
        """Set controls as a student would (each change re-runs the function once)."""
        for name, value in values.items():
            if name not in self.controls:
                raise KeyError(f"no control named {name!r}; controls: {sorted(self.controls)}")
            self.controls[name].value = value

    def _on_change(self, change: Mapping[str, Any]) -> None:
        self.update()

    def update(self) -> None:
        """Run the function with the current values and redraw (called on every control change)."""
        self.runs += 1
        try:
            out = self.fn(**self.values)
        except Exception as exc:  # shown in the panel; the previous chart stays
            self.error = f"{type(exc).__name__}: {exc}"
            self.caption_widget.value = (f'<span style="color:#b00020;">Could not redraw with '
                                         f"{_html.escape(_fmt(self.values))}: {_html.escape(self.error)}</span>")
            return
        self.error = None
        chart, caption = _split(out)
        self.result, self.caption = chart, caption
        self.caption_widget.value = _html.escape(caption)
        self.output.outputs = ()
        if chart is not None:
            self.output.append_display_data(chart)

    def snapshot_html(self) -> str:
        """The current caption and chart as static HTML (what an exported notebook shows)."""
        parts = [f"<p>{_html.escape(_fmt(self.values))}</p>"]
        if self.caption:
            parts.append(f"<p>{_html.escape(self.caption)}</p>")
        for o in self.output.outputs:
            data = o.get("data", {})
            if "image/svg+xml" in data:
                parts.append(data["image/svg+xml"])
            elif "image/png" in data:
                parts.append(f'<img src="data:image/png;base64,{data["image/png"]}"/>')
            elif "text/html" in data:
                parts.append(data["text/html"])
            elif "text/plain" in data:
                parts.append(f"<pre>{_html.escape(data['text/plain'])}</pre>")
        return "".join(parts)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # the live widget, plus a static snapshot for viewers without a kernel (an HTML export, GitHub)
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.snapshot_html()
        return bundle


def _split(out: Any) -> tuple[Any, str]:
    if isinstance(out, str):
        return None, out
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        return out[0], out[1]
    return out, ""


def _fmt(values: Mapping[str, Any]) -> str:
    """``a=0.5, b=2``; a list or tuple value reads ``voters: gpt_4, gpt_3_5`` (never a tuple repr)."""
    def one(k: str, v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return f"{k}: {', '.join(map(str, v))}"
        return f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
    return "; ".join(one(k, v) for k, v in values.items()) if any(
        isinstance(v, (list, tuple)) for v in values.values()) else ", ".join(one(k, v) for k, v in values.items())


def track(iterable: Iterable[T], *, desc: str = "items", total: int | None = None, disable: bool = False,
          unit: str = "item") -> Iterator[T]:
    """Iterate with a progress bar (``disable=True`` hides it) and print one summary line at the end."""
    from mabpd_kit.runs import progress_bar  # in a notebook: one line updated in place (exports keep the end)
    if total is None and isinstance(iterable, Sequence):
        total = len(iterable)
    bar = progress_bar(total, desc=desc, disable=disable, unit=unit)
    start = time.perf_counter()
    done = 0
    finished = False
    try:
        for item in iterable:
            done += 1
            bar.update(1)
            yield item
        finished = True
    finally:
        bar.close()
        secs = time.perf_counter() - start
        of = f" of {total}" if total is not None else ""
        rate = f"{done / secs:.1f} {unit}/s" if secs > 0 and done else "-"
        status = "" if finished else " (stopped early)"
        shown = f"{secs:.1f}" if secs >= 10 else f"{secs:.3f}"   # "0.136 s", not "0.1 s" beside 36.7/s
        print(f"{desc}: {done}{of} {unit}s in {shown} s ({rate}){status}")


def simulator_panel(n_items: int = 600, seed: int = 0) -> ParameterPanel:
    """The MABPD simulator behind sliders (lessons 04, 05)."""
    from mabpd_kit.viz.simulator import simulator_view
    view = partial(simulator_view, n_items=n_items, seed=seed)
    return ParameterPanel(view, {"hallucination": (0.0, 0.6, 0.05), "competence": (0.5, 0.95, 0.05),
                                 "correlation": (0.0, 0.9, 0.1), "calibration": (0.0, 1.0, 0.1)},
                          title="Simulated agents through the real pipeline: when do debate and grounding help?")


def lexicon_panel(lex: Any = None, dev_texts: Sequence[str] | None = None, dev_name: str = "dev sample") -> ParameterPanel:
    """Lexicon construction (lesson 01): a term, a neutral phrase to protect and the floor, and their effect
    (:func:`mabpd_kit.viz.lexicon.lexicon_effect`). Text boxes apply on Enter."""
    import ipywidgets as w

    from mabpd_kit.config import Config
    from mabpd_kit.lexicon import Lexicon
    from mabpd_kit.viz.lexicon import lexicon_effect
    lex = lex if lex is not None else Lexicon.default()
    cfg = Config().lexicon
    floors = sorted({cfg.confidence_floor, *(round(b - 0.05, 2) for b in cfg.bands)})
    view = partial(lexicon_effect, lex, category="presupposition_markers", band=0.6, pos="fixed", floor=cfg.confidence_floor,
                   dev_texts=list(dev_texts) if dev_texts else None, dev_name=dev_name)
    style = {"description_width": "initial"}
    controls = {
        "term": w.Text(value="even", description="term", continuous_update=False, style=style),
        "category": sorted(lex.categories),
        "band": list(cfg.bands),
        "pos": ["noun", "verb", "adj", "fixed"],
        "protect": w.Text(value="even if", description="protected phrase", continuous_update=False, style=style),
        "floor": floors,
    }
    return ParameterPanel(view, controls, title="Build the lexicon: one term, one protected phrase, one floor")


def llm_vote_panel(table: Any, n_resamples: int | None = None, seed: int | None = None) -> ParameterPanel:
    """The ten real LLMs' BABE labels behind a choice of voters (lesson 08). Each redraw bootstraps every voter:
    keep ``n_resamples`` near 2,000."""
    import ipywidgets as w

    from mabpd_kit.evaluate.llm_labels import models
    from mabpd_kit.metrics import macro_f1
    from mabpd_kit.viz.llm_labels import vote_view

    # listed best first (macro F1 on these sentences), so a tie goes to the strongest voter chosen, as in vote_sizes
    names = sorted(models(table), key=lambda m: -macro_f1(table["gold"], table[m]))
    start = tuple(m for m in ("gpt_4", "gpt_3_5", "mixtral_8x7b") if m in names) or tuple(names[:3])
    view = partial(vote_view, table, n_resamples=n_resamples, seed=seed)
    control = w.SelectMultiple(options=names, value=start, rows=len(names), description="voters",
                               style={"description_width": "initial"})
    return ParameterPanel(lambda voters=start: view(voters=list(voters)), {"voters": control},
                          title="Ten real LLMs on BABE train: does a majority vote beat the best of its voters?")
