"""The identity-bias measures on a debate log (LLM runs, simulated runs, SAD debates).

A disagreement pair is (agent i, peer j, round t) with ``y[i,t-1] != y[j,t-1]``; Conformity is the share
of pairs with ``y[i,t] == y[j,t-1]``, Obstinacy with ``y[i,t] == y[i,t-1]``, Delta = Conformity -
Obstinacy and IBC = Delta(vanilla) - Delta(anonymised). An unparsed current answer follows
``config.identity.unparsed``; confidence intervals resample whole questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.identity.logs import CONDITIONS

Unparsed = Literal["neither", "drop"]

__all__ = [
    "PAPER_CORRECTION_CUT", "PAPER_SUBVERSION_CUT", "PAPER_TABLE", "IBCResult", "IdentityReport", "disagreement_pairs",
    "ibc", "identity_report", "identity_summary", "majority_accuracy", "paper_table", "trust_cut", "trust_rates"
]


def _prepare(logs: pd.DataFrame) -> pd.DataFrame:
    """The measure columns of a log; a log without ``condition`` is one condition, ``"all"``."""
    need = ["question", "agent", "round", "answer", "correct"]
    missing = set(need) - set(logs.columns)
    if missing:
        raise ValueError(f"log is missing column(s) {sorted(missing)}; need question, agent, round, answer, correct")
    df = logs.loc[:, [c for c in ("condition", *need) if c in logs.columns]].copy()
    if "condition" not in df.columns:
        df["condition"] = "all"
    df["answer"] = df["answer"].astype(object).where(df["answer"].notna(), None)
    df["correct"] = df["correct"].fillna(False).astype(bool)
    df["round"] = df["round"].astype(int)
    return df


@dataclass
class _Cube:
    """A log as dense arrays [condition, question, round, agent]: ``y`` answer codes (-1: absent or unparsed), ``right``."""

    conditions: list[Any]
    questions: list[Any]
    rounds: list[int]
    agents: list[Any]
    answers: list[Any]
    y: np.ndarray
    right: np.ndarray
    present: np.ndarray

    @classmethod
    def of(cls, logs: pd.DataFrame) -> _Cube:
        df = _prepare(logs)
        if df.empty:
            raise ValueError("the log has no rows to measure (for SAD logs: did any item reach a debate?)")
        names = list(pd.unique(df["condition"]))
        conds = [c for c in CONDITIONS if c in names] + [c for c in names if c not in CONDITIONS]
        ci = pd.Categorical(df["condition"], categories=conds).codes
        qi, qs = pd.factorize(df["question"], sort=True)
        ai, agents = pd.factorize(df["agent"], sort=True)
        r0 = int(df["round"].min()) if len(df) else 0
        ri = df["round"].to_numpy() - r0
        n_r = int(ri.max()) + 1 if len(df) else 0
        yi, answers = pd.factorize(df["answer"], use_na_sentinel=True)
        shape = (len(conds), len(qs), n_r, len(agents))
        y = np.full(shape, -1, dtype=np.int64)
        right = np.zeros(shape, dtype=bool)
        present = np.zeros(shape, dtype=bool)
        y[ci, qi, ri, ai] = yi
        right[ci, qi, ri, ai] = df["correct"].to_numpy()
        present[ci, qi, ri, ai] = True
        return cls(list(conds), list(qs), list(range(r0, r0 + n_r)), list(agents), list(answers), y, right, present)

    @property
    def unparsed(self) -> np.ndarray:
        """[c, q, r, agent]: a row that is in the log but whose answer did not parse."""
        return self.present & (self.y < 0)

    def pair_masks(self, unparsed: Unparsed = "neither") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Boolean arrays [c, q, t, i, j]: disagreement pair, conformed, stayed, unparsed current answer."""
        if unparsed not in ("neither", "drop"):
            raise ValueError(f"identity.unparsed must be 'neither' or 'drop', not {unparsed!r}")
        prev, now = self.y[:, :, :-1], self.y[:, :, 1:]
        n = self.y.shape[-1]
        yi, yj, yt = prev[..., :, None], prev[..., None, :], now[..., :, None]
        disagree = (yi >= 0) & (yj >= 0) & (yi != yj) & ~np.eye(n, dtype=bool)
        lost = disagree & self.unparsed[:, :, 1:, :, None]
        pair = disagree & ((yt >= 0) | (lost if unparsed == "neither" else False))
        conform = pair & (yt == yj)
        stay = pair & (yt == yi)
        return pair, conform, stay, lost

    def counts(self, rounds: Sequence[int] | None = None, unparsed: Unparsed = "neither") -> dict[str, np.ndarray]:
        """Per [condition, question]: pairs, conformed, stayed, unparsed (optionally only rounds ``t``)."""
        masks = self.pair_masks(unparsed)
        if rounds is not None:
            keep = np.isin(np.array(self.rounds[1:]), list(rounds))
            masks = tuple(m[:, :, keep] for m in masks)
        names = ("n", "conform", "obstinate", "unparsed")
        return {k: v.sum(axis=(2, 3, 4)).astype(float) for k, v in zip(names, masks)}


def _cube(logs: Any) -> _Cube:
    """The arrays of a log frame, a prepared cube, or a run's results (anything with ``to_frame()``)."""
    if isinstance(logs, _Cube):
        return logs
    if not isinstance(logs, pd.DataFrame) and hasattr(logs, "to_frame"):
        logs = logs.to_frame()
    return _Cube.of(logs)


def disagreement_pairs(logs: pd.DataFrame | _Cube, *, config: Config | None = None) -> pd.DataFrame:
    """Every disagreement pair: condition, question, round, agent, peer, own_prev, peer_prev, answer,
    conform, obstinate."""
    cube = _cube(logs)
    pair, conform, stay, _ = cube.pair_masks(_mode(config))
    c, q, t, i, j = np.nonzero(pair)
    ans = np.array(cube.answers + [None], dtype=object)  # code -1 -> None
    return pd.DataFrame({
        "condition": np.array(cube.conditions, dtype=object)[c], "question": np.array(cube.questions, dtype=object)[q],
        "round": np.array(cube.rounds)[t + 1], "agent": np.array(cube.agents, dtype=object)[i],
        "peer": np.array(cube.agents, dtype=object)[j], "own_prev": ans[cube.y[c, q, t, i]],
        "peer_prev": ans[cube.y[c, q, t, j]], "answer": ans[cube.y[c, q, t + 1, i]], "conform": conform[c, q, t, i, j],
        "obstinate": stay[c, q, t, i, j],
    })


def _mode(config: Config | None) -> Unparsed:
    return (config or Config()).identity.unparsed


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    d = float(np.sum(den))
    return float(np.sum(num)) / d if d > 0 else float("nan")


Columns = dict[str, np.ndarray]


def _boot(cols: Columns, stat: Any, cfg: Config) -> tuple[float, float, float]:
    """Bootstrap over questions: ``stat`` gets the per-question arrays at resampled question indices."""
    from mabpd_kit.metrics import bootstrap_ci

    n = len(next(iter(cols.values())))
    return bootstrap_ci(
        np.arange(n), lambda ix: stat({k: v[ix] for k, v in cols.items()}),
        n_resamples=cfg.identity.bootstrap, seed=cfg.identity.seed,
    )


_STATS = {
    "conformity": lambda f: _ratio(f["conform"], f["n"]),
    "obstinacy": lambda f: _ratio(f["obstinate"], f["n"]),
    "delta": lambda f: _ratio(f["conform"] - f["obstinate"], f["n"]),
}


def identity_summary(logs: pd.DataFrame | _Cube, *, ci: bool = True, by_round: bool = False,
                     config: Config | None = None) -> pd.DataFrame:
    """Conformity, obstinacy and Delta per condition (``by_round``: and round) with counts; ``ci=True``
    adds 95% bootstrap bounds."""
    cfg = config or Config()
    mode = cfg.identity.unparsed
    cube = _cube(logs)
    slices: list[tuple[int | None, dict[str, np.ndarray]]] = (
        [(t, cube.counts([t], mode)) for t in cube.rounds[1:]] if by_round else [(None, cube.counts(None, mode))]
    )
    out = []
    for k, cond in enumerate(cube.conditions):
        asked = cube.present[k].any(axis=(1, 2))
        for rnd, counts in slices:
            cols = {name: v[k][asked] for name, v in counts.items()}
            row: dict[str, Any] = {"condition": cond} | ({"round": rnd} if by_round else {})
            row |= {
                "n_questions": int(asked.sum()), "n_answers": int(cube.present[k].sum()),
                "n_unparsed": int(cube.unparsed[k].sum()), "n_pairs": int(cols["n"].sum()),
                "n_pairs_unparsed": int(cols["unparsed"].sum()), "unparsed": mode,
            }
            for name, stat in _STATS.items():
                row[name] = stat(cols)
                if ci:
                    _, lo, hi = _boot(cols, stat, cfg) if row["n_pairs"] else (np.nan, np.nan, np.nan)
                    row[f"{name}_lo"], row[f"{name}_hi"] = lo, hi
            out.append(row)
    return pd.DataFrame(out)


@dataclass(frozen=True)
class IBCResult:
    """IBC = Delta(vanilla) - Delta(anonymised), with a 95% CI from resampling questions."""

    estimate: float
    lo: float
    hi: float
    delta_vanilla: float
    delta_anonymised: float
    n_questions: int
    n_unparsed: int = 0
    """answers (both conditions) that did not parse"""
    unparsed: Unparsed = "neither"
    """how a pair whose current answer is unparsed was read: ``"neither"`` or ``"drop"``"""

    def __str__(self) -> str:
        ci = "" if np.isnan(self.lo) else f" [{self.lo:+.3f}, {self.hi:+.3f}]"
        how = "counted as neither" if self.unparsed == "neither" else "pairs dropped"
        return (
            f"IBC = {self.estimate:+.3f}{ci}  (Delta vanilla {self.delta_vanilla:+.3f}, "
            f"anonymised {self.delta_anonymised:+.3f}; {self.n_questions} questions; "
            f"{self.n_unparsed} unparsed answers, {how})"
        )


def ibc(logs: pd.DataFrame | _Cube, *, rounds: Sequence[int] | None = None, ci: bool = True,
        config: Config | None = None) -> IBCResult:
    """The Identity Bias Coefficient of a log with both conditions: positive, peers over-weighted."""
    cfg = config or Config()
    cube = _cube(logs)
    if not set(CONDITIONS) <= set(cube.conditions):
        raise ValueError(f"IBC needs both conditions in the log (vanilla and anonymised); found {cube.conditions}")
    counts = cube.counts(rounds, cfg.identity.unparsed)
    cols = {f"{m}_{c}": counts[m][cube.conditions.index(c)] for m in counts for c in CONDITIONS}

    def delta(f: Columns, cond: str) -> float:
        return _ratio(f[f"conform_{cond}"] - f[f"obstinate_{cond}"], f[f"n_{cond}"])

    def stat(f: Columns) -> float:
        return delta(f, "vanilla") - delta(f, "anonymised")

    dv, da = delta(cols, "vanilla"), delta(cols, "anonymised")
    est, lo, hi = _boot(cols, stat, cfg) if ci else (dv - da, float("nan"), float("nan"))
    n_bad = int(sum(cube.unparsed[cube.conditions.index(c)].sum() for c in CONDITIONS))
    return IBCResult(float(est), float(lo), float(hi), dv, da, len(cube.questions), n_bad, cfg.identity.unparsed)


def trust_rates(logs: pd.DataFrame | _Cube, *, ci: bool = False, config: Config | None = None) -> pd.DataFrame:
    """Subversion (right -> wrong after a wrong peer) and correction (the reverse) per condition, as events
    over exposures; ``ci=True`` adds 95% bootstrap bounds."""
    cfg = config or Config()
    if cfg.identity.unparsed not in ("neither", "drop"):
        raise ValueError(f"identity.unparsed must be 'neither' or 'drop', not {cfg.identity.unparsed!r}")
    cube = _cube(logs)
    ok = cube.present & (cube.y >= 0)
    wrong = ok & ~cube.right
    prev_right, prev_wrong = cube.right[:, :, :-1], wrong[:, :, :-1]
    peers_right = prev_right.sum(-1, keepdims=True) - prev_right
    peers_wrong = prev_wrong.sum(-1, keepdims=True) - prev_wrong
    now = cube.present[:, :, 1:] if cfg.identity.unparsed == "neither" else ok[:, :, 1:]
    now_right, now_wrong = cube.right[:, :, 1:], wrong[:, :, 1:]
    sub_risk = prev_right & (peers_wrong > 0) & now  # [c, q, t, agent]
    cor_risk = ~prev_right & cube.present[:, :, :-1] & (peers_right > 0) & now
    per_q = {  # per [condition, question]: events and exposures
        "sub": (sub_risk & now_wrong).sum(axis=(2, 3)).astype(float),
        "sub_risk": sub_risk.sum(axis=(2, 3)).astype(float),
        "cor": (cor_risk & now_right).sum(axis=(2, 3)).astype(float),
        "cor_risk": cor_risk.sum(axis=(2, 3)).astype(float),
    }
    stats = {
        "subversion_rate": lambda f: _ratio(f["sub"], f["sub_risk"]),
        "correction_rate": lambda f: _ratio(f["cor"], f["cor_risk"]),
    }
    out = []
    for k, cond in enumerate(cube.conditions):
        cols = {name: v[k] for name, v in per_q.items()}
        row: dict[str, Any] = {
            "condition": cond, "n_unparsed": int(cube.unparsed[k].sum()), "n_subversion": int(cols["sub"].sum()),
            "subversion_at_risk": int(cols["sub_risk"].sum()), "subversion_rate": stats["subversion_rate"](cols),
            "n_correction": int(cols["cor"].sum()), "correction_at_risk": int(cols["cor_risk"].sum()),
            "correction_rate": stats["correction_rate"](cols),
        }
        if ci:
            for name, stat in stats.items():
                _, lo, hi = _boot(cols, stat, cfg) if np.isfinite(row[name]) else (np.nan, np.nan, np.nan)
                row[f"{name}_lo"], row[f"{name}_hi"] = lo, hi
        out.append(row)
    return pd.DataFrame(out)


def trust_cut(logs: pd.DataFrame | _Cube) -> dict[str, float]:
    """How much anonymisation cuts subversion and correction: ``1 - anonymised / vanilla`` on event counts."""
    return _cuts(trust_rates(logs))


def _cuts(trust: pd.DataFrame) -> dict[str, float]:
    t = trust.set_index("condition")
    if not set(CONDITIONS) <= set(t.index):
        raise ValueError("trust_cut needs both conditions in the log")

    def cut(col: str) -> float:
        v = t.loc["vanilla", col]
        return float(1 - t.loc["anonymised", col] / v) if v else float("nan")

    return {"subversion_cut": cut("n_subversion"), "correction_cut": cut("n_correction")}


def majority_accuracy(logs: pd.DataFrame | _Cube) -> pd.DataFrame:
    """Per condition and round: majority-vote accuracy (ties score their right share) and mean agent accuracy."""
    cube = _cube(logs)
    n_codes = max(len(cube.answers), 1)
    onehot = (cube.y[..., None] == np.arange(n_codes))  # [c, q, r, agent, code]
    votes = onehot.sum(axis=3)
    code_right = (onehot & cube.right[..., None]).any(axis=3)
    top = (votes == votes.max(axis=-1, keepdims=True)) & (votes > 0)
    n_top = top.sum(-1)
    majority = np.where(n_top > 0, (top & code_right).sum(-1) / np.maximum(n_top, 1), 0.0)
    asked = cube.present.any(axis=3)
    agent_acc = cube.right.sum(-1) / np.maximum(cube.present.sum(-1), 1)
    out = []
    for k, cond in enumerate(cube.conditions):
        for t, rnd in enumerate(cube.rounds):
            m = asked[k, :, t]
            if m.any():
                out.append({"condition": cond, "round": rnd, "majority_accuracy": float(majority[k, m, t].mean()),
                            "agent_accuracy": float(agent_acc[k, m, t].mean()), "n_questions": int(m.sum()),
                            "n_unparsed": int(cube.unparsed[k, :, t].sum())})
    return pd.DataFrame(out)


@dataclass
class IdentityReport:
    """Every measure of one log; ``ibc`` is ``None`` unless the log holds both conditions."""

    summary: pd.DataFrame
    trust: pd.DataFrame
    accuracy: pd.DataFrame
    ibc: IBCResult | None = None
    cuts: dict[str, float] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """Conformity / obstinacy / Delta and subversion / correction side by side."""
        return self.summary.merge(self.trust.drop(columns="n_unparsed"), on="condition", how="left")

    def __str__(self) -> str:
        cols = ["condition", "n_answers", "n_unparsed", "n_pairs", "n_pairs_unparsed", "conformity", "obstinacy",
                "delta", "subversion_rate", "correction_rate"]
        lines = [self.table()[cols].round(3).to_string(index=False)]
        if int(self.summary["n_unparsed"].sum()):
            how = ("counted as neither conforming nor obstinate" if self.summary["unparsed"].iloc[0] == "neither"
                   else "left out of the pairs")
            lines.append(f"pairs whose current answer is unparsed (n_pairs_unparsed) are {how}")
        if self.ibc is not None:
            lines.append(str(self.ibc))
        if self.cuts:
            sub, cor = (f"{v:.1%}" if np.isfinite(v) else "n/a (no events)" for v in self.cuts.values())
            lines.append(f"anonymisation cuts subversion by {sub} and correction by {cor}")
        return "\n".join(lines)


def identity_report(logs: pd.DataFrame, *, ci: bool = True, config: Config | None = None) -> IdentityReport:
    """All measures at once: summary (with CIs), trust rates, accuracy by round, IBC and cuts."""
    cube = _cube(logs)
    both = set(CONDITIONS) <= set(cube.conditions)
    trust = trust_rates(cube, ci=ci, config=config)  # every measure also accepts the prepared cube
    return IdentityReport(
        summary=identity_summary(cube, ci=ci, config=config), trust=trust, accuracy=majority_accuracy(cube),
        ibc=ibc(cube, ci=ci, config=config) if both else None, cuts=_cuts(trust) if both else {},
    )


PAPER_TABLE: tuple[tuple[str, str, float, float, float], ...] = (
    ("Qwen-32B", "MMLU", 0.608, 0.024, 0.584), ("Qwen-7B", "HellaSwag", 0.507, -0.032, 0.539),
    ("Llama-8B", "MMLU", 0.151, -0.157, 0.307), ("Mistral-7B", "GSM8K", -0.302, -0.157, -0.145),
    ("GPT-OSS-20B", "HellaSwag", 0.180, -0.069, 0.249),
)
"""(model, dataset, Delta vanilla, Delta anonymised, IBC) as reported by the paper. It also
reports 18 of 20 model-dataset pairs with positive IBC, and for Qwen-32B on MMLU that
anonymisation cut subversion by 64.3% and correction by 14.9%."""

PAPER_SUBVERSION_CUT = 0.643
PAPER_CORRECTION_CUT = 0.149


def paper_table() -> pd.DataFrame:
    """:data:`PAPER_TABLE` as a DataFrame (columns model, dataset, delta_vanilla, delta_anonymised, ibc)."""
    return pd.DataFrame(PAPER_TABLE, columns=["model", "dataset", "delta_vanilla", "delta_anonymised", "ibc"])

