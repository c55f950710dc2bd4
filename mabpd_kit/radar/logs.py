"""Loaders for the RADAR repository's logged outputs (the real Llama-3-8B adaptive-stopping run)."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.radar.stopping import ROUND_NAMES, RoundState, Trajectory

__all__ = ["DECISIONS_CSV", "DEFAULT_RUN", "VERDICTS_CSV", "LoggedRun", "load_radar_decisions", "load_radar_run"]

DEFAULT_RUN = "outputs/retrieved_evidence_bgebase_answer_map_multi_people_hybrid_mcq_llama.json"
DECISIONS_CSV = "outputs/continuation_decisions_summary.csv"
VERDICTS_CSV = "outputs/claim_stage_verdict_summary.csv"


@dataclass
class LoggedRun:
    """A parsed answer map: one trajectory per claim, the run's own outcome per claim (``logged``), the
    unparsed records (``skipped``) and the number of scored STOP/CONTINUE decisions."""

    trajectories: list[Trajectory]
    logged: pd.DataFrame
    skipped: list[tuple[str, str]]
    n_decisions: int
    path: Path
    thresholds: tuple[float, float] | None = None


def _gold_labels(data_dir: str | Path | None) -> dict[str, str]:
    """Gold labels of the PolitiFact-Hidden test split: GT_test_all.json, else the 150-claim summary."""
    from mabpd_kit.data import locate

    try:
        gt = json.loads(locate("PolitiFact-Hidden", "GT_test_all.json", data_dir).read_text())
        return {str(k): str(v).upper() for k, v in gt.items()}
    except FileNotFoundError:
        pass
    try:
        df = pd.read_csv(locate("RADAR", VERDICTS_CSV, data_dir))
        return {str(k): str(v).upper() for k, v in zip(df.claim_id, df.ground_truth)}
    except FileNotFoundError:
        return {}


def _norm_probs(d: Mapping[str, Any] | None, labels: Sequence[str]) -> dict[str, float] | None:
    if not isinstance(d, Mapping):
        return None
    probs = {lab: float(d.get(lab, 0.0) or 0.0) for lab in labels}
    total = sum(probs.values())
    if not total > 0 or any(not math.isfinite(v) or v < 0 for v in probs.values()):
        return None
    return {k: v / total for k, v in probs.items()}


def _parse_claim(cid: str, rec: Mapping[str, Any], labels: Sequence[str], max_rounds: int) -> tuple[list[RoundState], dict]:
    """One record of the answer map -> the Judge's state per executed round."""
    executed = list(rec.get("executed_rounds") or [])
    if not executed:
        raise ValueError("no executed_rounds: not a hybrid adaptive-stopping record")
    judges = rec.get("round_judges") or {}
    decisions = {d.get("round"): d for d in rec.get("continuation_decisions") or [] if isinstance(d, Mapping)}
    final = rec.get("final_verdict") if isinstance(rec.get("final_verdict"), Mapping) else {}
    states = []
    for r in range(1, len(executed) + 1):
        probs = _norm_probs((judges.get(f"round_{r}") or {}).get("verdict_probabilities"), labels)
        if probs is None and r == len(executed):
            probs = _norm_probs(final.get("verdict_probabilities"), labels)
        if probs is None:
            raise ValueError(f"no label probabilities for round {r}")
        p_stop = p_cont = None
        if r < max_rounds:
            dec = decisions.get(ROUND_NAMES[r]) if r < len(ROUND_NAMES) else None
            cp = (dec or {}).get("choice_probabilities")
            if isinstance(cp, Mapping) and "STOP" in cp and "CONTINUE" in cp:
                p_stop, p_cont = float(cp["STOP"]), float(cp["CONTINUE"])
            elif r < len(executed):
                raise ValueError(f"no STOP/CONTINUE probabilities after round {r}")
        states.append(RoundState(round=r, label_probs=probs, p_stop=p_stop, p_continue=p_cont, source="logged"))
    info = dict(
        executed_rounds=len(executed),
        final_verdict=str(final.get("verdict", "")).upper() or None,
        logged_decisions=[(d.get("round"), d.get("decision")) for d in rec.get("continuation_decisions") or []],
    )
    return states, info


def load_radar_run(path: str | Path | None = None, *, data_dir: str | Path | None = None, config: Config | None = None,
                   gold: Mapping[str, str] | None = None) -> LoggedRun:
    """Read a ``*_hybrid_*`` answer map (default: the Llama-3-8B run), gold from PolitiFact-Hidden."""
    from mabpd_kit.data import locate

    cfg = config or Config()
    labels = tuple(cfg.radar.labels)
    max_rounds = cfg.radar.max_rounds
    p = Path(path) if path is not None else locate("RADAR", DEFAULT_RUN, data_dir)
    raw = json.loads(Path(p).read_text())
    if not isinstance(raw, Mapping):
        raise ValueError(f"{p}: expected a JSON object of claim id -> record")
    gold_map = dict(gold) if gold is not None else _gold_labels(data_dir)
    trajs, rows, skipped, n_dec, thresholds = [], [], [], 0, None
    for cid, rec in raw.items():
        cid = str(cid)
        try:
            if not isinstance(rec, Mapping):
                raise ValueError("record is not an object")
            states, info = _parse_claim(cid, rec, labels, max_rounds)
        except (ValueError, TypeError, KeyError) as exc:
            skipped.append((cid, str(exc)))
            continue
        th = rec.get("thresholds") or {}
        if "tau_s" in th and "tau_v" in th:
            thresholds = (float(th["tau_s"]), float(th["tau_v"]))
        n_dec += sum(1 for s in states if s.p_stop is not None)
        g = gold_map.get(cid)
        trajs.append(Trajectory(id=cid, rounds=tuple(states), gold=g, max_rounds=max_rounds,
                                meta={"source_file": Path(p).name}))
        rows.append(dict(id=cid, gold=g, **info))
    if skipped:
        warnings.warn(f"{len(skipped)} of {len(raw)} records in {Path(p).name} skipped (see .skipped)", stacklevel=2)
    return LoggedRun(trajs, pd.DataFrame(rows), skipped, n_dec, Path(p), thresholds)


def load_radar_decisions(path: str | Path | None = None, *, data_dir: str | Path | None = None) -> pd.DataFrame:
    """``continuation_decisions_summary.csv``: every logged STOP/CONTINUE decision with run, round, s, gold."""
    from mabpd_kit.data import locate

    p = Path(path) if path is not None else locate("RADAR", DECISIONS_CSV, data_dir)
    df = pd.read_csv(p, dtype={"claim_id": str})
    df["source_file"] = df["source_file"].replace("", np.nan).ffill()
    name = df["source_file"].fillna("").str.rsplit("/", n=1).str[-1]
    evidence = np.where(name.str.contains("matching_evidence_full"), "gold", "retrieved")
    judge = name.str.extract(r"_(bj|fj)_", expand=False).fillna("?")
    df["run"] = pd.Series(evidence, index=df.index) + "-" + judge
    df["round_index"] = df["round"].map({n: i + 1 for i, n in enumerate(ROUND_NAMES)})
    df = df.rename(columns={"prob_stop": "p_stop", "prob_continue": "p_continue"})
    df["s"] = df["p_stop"] - df["p_continue"]
    gold = _gold_labels(data_dir)
    df["gold"] = df["claim_id"].map(gold)
    return df[["run", "source_file", "claim_id", "round", "round_index", "decision", "p_stop", "p_continue", "s", "gold"]]
