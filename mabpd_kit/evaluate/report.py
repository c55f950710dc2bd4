"""The record of one evaluation (:class:`Evaluation`): tables, closing note, markdown report, files."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.evaluate.analyses import PaperAnalyses

__all__ = ["ANCHOR_KIND", "FLIPS", "Evaluation"]

#: the ``kind`` of a reference anchor row in :attr:`Evaluation.metrics` (every other row is an evaluated system)
ANCHOR_KIND = "reference LLM (zero-shot labels)"
#: the flip counts of a comparison (:func:`mabpd_kit.evaluate.flip_counts`)
FLIPS = ("fn_rescued", "fp_added", "tp_lost", "fp_removed")


def _md(value: Any) -> str:
    """A value as one line of markdown text: HTML, pipes and backticks escaped (renderers pass raw HTML)."""
    import html
    text = html.escape(str(value), quote=False).replace("|", "\\|").replace("`", "\\`")
    return " ".join(text.split())


def _md_table(df: pd.DataFrame, floats: str = "{:.3f}") -> str:
    """A GitHub markdown table (no extra dependency); every cell escaped (:func:`_md`)."""
    def fmt(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else floats.format(v)
        return _md(v)

    head = "| " + " | ".join(map(_md, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])


@dataclass
class Evaluation:
    """Everything one evaluation produced; ``str(ev)`` is the closing note."""

    dataset: str
    split: str
    configs: list[str]
    mode: str
    n_items: int
    predictions: pd.DataFrame  # one row per (system, item)
    metrics: pd.DataFrame  # one row per system (evaluated systems first, then anchors)
    comparisons: pd.DataFrame  # paired bootstrap of each system against the first
    wall_s: float
    n_resamples: int
    seed: int
    files: dict[str, str] = field(default_factory=dict)
    run_s: dict[str, float] = field(default_factory=dict)
    truncate_words: int | None = None  # texts were cut to this many words (None: no cut)
    n_truncated: dict[str, int] = field(default_factory=dict)  # system -> items cut (flag "truncated")
    spans: pd.DataFrame | None = None  # span scores against annotated biased words (evaluate.spans.span_table)
    analyses: PaperAnalyses | None = None  # the paper's appendix O/P figures and kappa (evaluate.analyses)

    @property
    def all_failed(self) -> list[str]:
        """The evaluated systems on which every item failed (nothing was measured)."""
        rows = self.metrics[self.metrics["kind"] != ANCHOR_KIND]
        return [r.system for r in rows.itertuples(index=False) if r.n and r.n_failed == r.n]

    @property
    def baseline(self) -> str:
        return self.configs[0]

    def chart(self) -> alt.TopLevelMixin:
        """Grouped bars of macro F1 / F1 / precision / recall per system, macro F1 with its CI."""
        from mabpd_kit.viz.evaluation import metrics_chart
        return metrics_chart(self.metrics, title=f"{self.dataset} {self.split}: {self.n_items} items, {self.mode}")

    def closing_note(self) -> str:
        lines = [f"{self.dataset} {self.split}, {self.n_items} items, {self.mode}; {self.wall_s:.1f} s in all"]
        for r in self.metrics[self.metrics["kind"] != ANCHOR_KIND].itertuples(index=False):
            lines.append(
                f"  {r.system:<24} macro F1 {r.macro_f1:.3f} [{r.macro_f1_lo:.3f}, {r.macro_f1_hi:.3f}]  "
                f"F1 {r.f1:.3f}  P {r.precision:.3f}  R {r.recall:.3f}  failed {r.n_failed}  ({self.run_s.get(r.system, 0):.1f} s)"
            )
        cmp = self.comparisons[self.comparisons["metric"] == "macro_f1"]
        for r in cmp.itertuples(index=False):
            line = (f"  {r.baseline} - {r.system}: macro F1 diff {r.diff:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}], "
                    f"p = {r.p_value:.4f} (paired bootstrap, {r.n_resamples} resamples)")
            if not _missing(r.fn_rescued):  # flips exist for binary labels only
                line += (f"; versus {r.system}, {r.baseline} rescues {_n(r.fn_rescued, 'false negative')} and adds "
                         f"{_n(r.fp_added, 'false positive')} (loses {_n(r.tp_lost, 'true positive')}, "
                         f"removes {_n(r.fp_removed, 'false positive')})")
            lines.append(line)
        if self.truncate_words:
            cut = max(self.n_truncated.values(), default=0)
            lines.append(f"  texts cut to {self.truncate_words} words: {cut} of {self.n_items} (flag 'truncated')")
        anchors = self.metrics[self.metrics["kind"] == ANCHOR_KIND]
        if len(anchors):
            best = anchors.sort_values("macro_f1", ascending=False).iloc[0]
            lines.append(f"  reference anchors: {len(anchors)} LLM label columns, best {best['system']} macro F1 {best['macro_f1']:.3f} (n={best['n']})")
        lines += self._span_lines()
        if self.analyses is not None:
            lines += self.analyses.lines()
        return "\n".join(lines)

    def _span_lines(self) -> list[str]:
        """Span scores: one line per spans row, the biased-gold scope then all sentences."""
        if self.spans is None or not len(self.spans):
            return []
        lines = ["  spans vs annotated biased words (token overlap, micro-averaged; "
                 "biased-gold sentences | all sentences):"]
        for (system, what), g in self.spans.groupby(["system", "spans"], sort=False):
            by = g.set_index("scope")
            parts = [f"P {r.precision:.3f} R {r.recall:.3f} F1 {r.f1:.3f}"
                     + ("" if _missing(r.f1_lo) else f" [{r.f1_lo:.3f}, {r.f1_hi:.3f}]")
                     for r in (by.loc[s] for s in ("biased-gold", "all") if s in by.index)]
            lines.append(f"    {system + ' ' + what:<30} " + " | ".join(parts))
        return lines

    def __str__(self) -> str:
        return self.closing_note()

    def markdown(self) -> str:
        """The report: metrics table, paired comparisons, anchors and how to read them."""
        cols = ["system", "n", "n_failed", "accuracy", "precision", "recall", "f1", "macro_f1", "macro_f1_lo", "macro_f1_hi"]
        pipe = self.metrics[self.metrics["kind"] != ANCHOR_KIND][cols]
        anchors = self.metrics[self.metrics["kind"] == ANCHOR_KIND][cols]
        cmp = self.comparisons[["baseline", "system", "metric", "diff", "lo", "hi", "p_value", *FLIPS]]
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        parts = [
            f"# Evaluation: {_md(self.dataset)} {_md(self.split)}", "",
            f"{self.n_items} items · {_md(self.mode)} · configurations {', '.join(map(_md, self.configs))} · "
            f"{self.wall_s:.1f} s · {when}", "",
            *_section("Metrics (positive class: biased; failed items count as neutral)", _md_table(pipe)),
            f"macro_f1_lo / _hi: {100 * 0.95:.0f}% bootstrap interval over items ({self.n_resamples} resamples, seed {self.seed}).",
            "",
            *_section(f"Paired bootstrap against `{_code(self.baseline)}`",
                      "diff = baseline minus system on the same resampled items; p is two-sided for \"no difference\". "
                      "fn_rescued / fp_added: items where only the baseline says biased (rightly / wrongly); "
                      "tp_lost / fp_removed: items where only the system says biased (rightly / wrongly).",
                      _md_table(cmp, floats="{:.4f}") if len(cmp) else "(only one configuration)"),
        ]
        if len(anchors):
            parts += _section("Reference anchors: zero-shot LLM labels shipped with the benchmark file",
                              "Scored on the evaluated items that carry a label (`n`); unparseable answers are left "
                              "out.", _md_table(anchors))
        if self.split == "test":
            parts += [("**Held-out test split.** Report these numbers once; choosing a configuration, threshold "
                      "or prompt because of them turns the test split into a training split."), ""]
        if self.spans is not None and len(self.spans):
            parts += _section("Spans against the annotated biased words",
                              "Token overlap per sentence (lower-cased word tokens of the predicted spans against "
                              "those of the annotated words, as sets), micro-averaged over the sentences of the scope; "
                              "f1_lo / _hi a bootstrap interval over sentences. Definitions: docs/evaluation.md.",
                              _md_table(self.spans))
        if self.analyses is not None:
            table = self.analyses.table().astype(object)
            parts += _section(f"The paper's analyses (appendices O and P), `{_code(self.analyses.system)}`",
                              "Rates with 95% bootstrap intervals over items; `paper` is the paper's figure. "
                              "Definitions: docs/evaluation.md.", _md_table(table.where(table.notna(), "")))
        note = self.closing_note().replace("`" * 3, "'" * 3)  # the fence holds, whatever the names
        parts += ["## Closing note", "", "```", note, "```", ""]
        return "\n".join(parts)

    def write(self, out_dir: str | Path) -> dict[str, str]:
        """Write results.csv, metrics.csv, comparisons.csv, report.md, chart.svg and chart.png, and spans.csv
        and analyses.csv where the evaluation has them."""
        import vl_convert as vlc
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {"results": out / "results.csv", "metrics": out / "metrics.csv", "comparisons": out / "comparisons.csv",
                 "report": out / "report.md", "chart_svg": out / "chart.svg", "chart_png": out / "chart.png"}
        from mabpd_kit.files import atomic, write_text  # each file all or nothing (a full disk leaves no half file)
        tables = {"results": self.predictions, "metrics": self.metrics, "comparisons": self.comparisons}
        if self.spans is not None:
            tables["spans"] = self.spans
        if self.analyses is not None:
            tables["analyses"] = self.analyses.table()
        for key, frame in tables.items():
            files.setdefault(key, out / f"{key}.csv")
            with atomic(files[key], "w", encoding="utf-8", newline="") as fh:
                frame.to_csv(fh, index=False)
        spec = self.chart().to_dict()
        write_text(files["chart_svg"], vlc.vegalite_to_svg(spec))
        with atomic(files["chart_png"], "wb") as fh:
            fh.write(vlc.vegalite_to_png(spec, scale=2))
        self.files = {k: str(v) for k, v in files.items()}
        write_text(files["report"], self.markdown())
        return self.files


def _section(title: str, *blocks: str) -> list[str]:
    """A markdown section: its heading, then each block followed by a blank line."""
    out = [f"## {title}", ""]
    for block in blocks:
        out += [block, ""]
    return out


def _code(name: str) -> str:
    """A name inside a code span: backticks become quotes, on one line (a code span is literal)."""
    return " ".join(name.replace("`", "'").split())


def _n(count: object, noun: str) -> str:
    """``1 false positive``, ``3 false positives``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and np.isnan(v))

