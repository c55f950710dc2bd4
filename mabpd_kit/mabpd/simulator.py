"""An offline simulator for MABPD: agents with planted competence, calibration, hallucination and
correlation, decided by the kit's own score, router, SAD and verifier into real Decisions.

>>> from mabpd_kit.mabpd.simulator import SimSpec, simulate
>>> abs(simulate(SimSpec(hallucination=0.3), n_items=400, seed=0).recover()["hallucination"] - 0.3) < 0.05
True
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from mabpd_kit import roster, runs
from mabpd_kit.config import Config
from mabpd_kit.mabpd import sad
from mabpd_kit.mabpd.pipeline import BatchResult, Decision
from mabpd_kit.mabpd.router import route
from mabpd_kit.mabpd.schemas import AgentReport, Argument
from mabpd_kit.mabpd.store import EvidenceStore, score_reports
from mabpd_kit.mabpd.verifier import rule_verify
from mabpd_kit.types import FrozenModel, Span

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AGENTS",  # noqa: F822 (module __getattr__)
           "CONFIGS", "SIM_MODEL", "SimSpec", "Simulation", "simulate", "sweep"]


def __getattr__(name: str) -> Any:
    if name == "AGENTS":  # the simulated agents: the roster's, in order (read when asked)
        return roster.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CONFIGS = ("full", "no-debate", "single-agent", "no-evidence-weighting")
"""The configurations :func:`simulate` decides by default (names of :meth:`Config.ablation`)."""
SIM_MODEL = "mabpd-simulator"
_QUOTE = (0, 40)        # the attributed quotation's place in a simulated text (reported region)
_OWN = 60               # author's-voice spans start here
_MAX_ROUNDS = 8

FloatOrPerAgent = float | tuple[float, ...]


class SimSpec(FrozenModel):
    """The planted settings of a simulated population."""

    prevalence: float = Field(0.5, ge=0, le=1, description="share of gold-biased items")
    competence: FloatOrPerAgent = Field(0.75, description="P(reading right), one value or one per agent on the roster (bias, evidence, framing)")
    calibration: float = Field(0.6, ge=0, le=1, description="0: confidence says nothing about being right; 1: it says most")
    correlation: float = Field(0.0, ge=0, le=1, description="share of items on which the agents share one draw")
    hallucination: float = Field(0.0, ge=0, le=1, description="P(a report is biased with invented quotes only)")
    quotation_share: float = Field(0.2, ge=0, le=1, description="share of items with an attributed quotation")
    spans: int = Field(2, ge=1, le=5, description="quotes a biased report cites")
    persuasion: float = Field(0.6, ge=0, le=1, description="how readily an agent switches to an opposing argument")
    gullibility: float = Field(0.5, ge=0, le=1, description="how much an invented quote persuades, relative to a real one")

    def per_agent(self, agents: Sequence[str] | None = None) -> np.ndarray:
        """``competence`` as one value per agent (``agents``: the roster's, bias, evidence, framing)."""
        k = len(agents if agents is not None else roster.names())
        v = np.asarray(self.competence, dtype=float).reshape(-1)
        if v.size == 1:
            v = np.repeat(v, k)
        if v.size != k or ((v < 0) | (v > 1)).any():
            raise ValueError(f"competence: one value or {k} (one per agent) in [0, 1], got {self.competence!r}")
        return v


class Simulation:
    """What :func:`simulate` returns: one :class:`BatchResult` per configuration, and the planted truth."""

    def __init__(self, spec: SimSpec, results: dict[str, BatchResult], truth: pd.DataFrame, wall_s: float,
                 agents: Sequence[str] | None = None) -> None:
        self.spec, self.results, self.truth, self.wall_s = spec, results, truth, wall_s
        self.agents: tuple[str, ...] = tuple(agents) if agents is not None else roster.names()

    def __getitem__(self, name: str) -> BatchResult:
        return self.results[name]

    def __repr__(self) -> str:
        return (f"Simulation({len(self.truth) // len(self.agents)} items, configs {list(self.results)}, "
                f"{self.wall_s:.2f} s)")

    def metrics(self) -> pd.DataFrame:
        """One row per configuration: macro F1, precision, recall, accuracy, debated share, overturned share."""
        import pandas as pd

        rows = {}
        for name, res in self.results.items():
            m = res.metrics()
            n = max(len(res), 1)
            rows[name] = {k: m.get(k, float("nan")) for k in ("macro_f1", "precision", "recall", "accuracy")}
            rows[name]["debated"] = sum(d.debate is not None for d in res) / n
            rows[name]["overturned"] = sum(bool(d.verifier and d.verifier.overturned) for d in res) / n
        return pd.DataFrame.from_dict(rows, orient="index")

    def reports_frame(self) -> pd.DataFrame:
        """One row per (item, agent) round-1 report: verdict, confidence, cited and valid quotes, gold."""
        import pandas as pd

        res = next((r for r in self.results.values() if all(len(d.reports) == len(self.agents) for d in r)), None)
        if res is None:
            raise ValueError(f"no configuration ran all {len(self.agents)} agents")
        rows = [{"id": d.id, "gold": d.gold, "agent": a, "verdict": r.verdict, "confidence": r.confidence,
                 "n_cited": len(r.spans), "n_valid": sum(s.valid for s in r.spans)}
                for d in res for a, r in d.reports.items()]
        return pd.DataFrame(rows)

    def recover(self) -> dict[str, Any]:
        """Estimate the planted hallucination, competence, calibration and correlation from the traces alone."""
        f = self.reports_frame()
        halluc = (f.n_cited > 0) & (f.n_valid == 0)
        f = f.assign(hallucinated=halluc, right=(f.verdict == "biased").astype(int) == f.gold)
        honest = f[~f.hallucinated]
        competence = honest.groupby("agent")["right"].mean().reindex(list(self.agents)).to_dict()
        clean_ids = f.groupby("id")["hallucinated"].transform("any")
        wide = f[~clean_ids].pivot(index="id", columns="agent", values="right").dropna()
        rhos = []
        for i, a in enumerate(self.agents):
            for b in self.agents[i + 1:]:
                x, y = 1 - wide[a].to_numpy(float), 1 - wide[b].to_numpy(float)
                ea, eb = x.mean(), y.mean()
                if min(ea, eb) - ea * eb > 0:
                    rhos.append(float(((x * y).mean() - ea * eb) / (min(ea, eb) - ea * eb)))
        gap = honest.loc[honest.right, "confidence"].mean() - honest.loc[~honest.right, "confidence"].mean()
        return {"hallucination": float(halluc.mean()), "competence": competence, "calibration": float(gap / 0.30),
                "correlation": float(np.mean(rhos)) if rhos else float("nan")}


def _span(i: int, agent: str, start: int, valid: bool, score: float) -> Span:
    if valid:
        return Span(text=f"w{start}", start=start, end=start + 4, agent=agent, category="loaded language",
                    score=score, reason="simulated: in the text")
    return Span(text=f"invented quote {i}", agent=agent, category="loaded language", score=score, valid=False,
                reason="simulated: not found in the text (hallucinated)")


def _reports(spec: SimSpec, gold: int, quoted: bool, draws: Mapping[str, np.ndarray],
             agents: Sequence[str]) -> dict[str, AgentReport]:
    """The agents' round-1 reports for one item (``draws``: this item's uniforms and normals)."""
    comp = spec.per_agent(agents)
    shared = draws["shared"] < spec.correlation
    out = {}
    for j, agent in enumerate(agents):
        u = draws["common"] if shared else draws["own"][j]
        right = bool(u < comp[j])
        hallucinates = bool(draws["halluc"][j] < spec.hallucination)
        mu = 0.70 + (0.15 if right else -0.15) * spec.calibration
        if hallucinates:
            mu = 0.85
        conf = float(np.clip(mu + 0.08 * draws["noise"][j], 0.05, 0.99))
        biased = hallucinates or (right == bool(gold))
        spans: list[Span] = []
        if hallucinates:
            spans = [_span(k, agent, 0, False, conf) for k in range(spec.spans)]
        elif biased:
            for k in range(spec.spans):
                if quoted and (not gold or draws["inquote"][j, k] < 0.5):
                    start = _QUOTE[0] + 5 + 8 * k   # inside the attributed quotation
                else:
                    start = _OWN + 10 * j + 4 * k
                spans.append(_span(k, agent, start, True, conf))
        counter = [] if biased else [_span(0, agent, 200 + 10 * j, True, conf)]
        out[agent] = AgentReport(agent=agent, verdict="biased" if biased else "neutral", confidence=conf,
                                 score=conf if biased else 1 - conf, spans=spans, counter_spans=counter,
                                 model=SIM_MODEL, rationale="simulated report")
    return out


def _first(r: AgentReport) -> Argument:
    """Round 1 restates the report: biased cites its spans, neutral its grounding."""
    return Argument(agent=r.agent, round=1, verdict=r.verdict, confidence=r.confidence, model=SIM_MODEL,
                    spans=list(r.spans if r.verdict == "biased" else r.counter_spans))


def _strength(a: Argument, gullibility: float) -> float:
    if not a.spans:
        return a.confidence if a.verdict == "neutral" else 0.0
    v = sum(s.valid for s in a.spans) / len(a.spans)
    return a.confidence * (v + gullibility * (1 - v))


def _reviser(spec: SimSpec, u: np.ndarray, agents: Sequence[str]):
    """The simulated debate move: ``u[round, agent]`` are this item's persuasion draws."""

    async def revise(agent: str, rnd: int, own: Argument, others: list[Argument]) -> Argument:
        opposing = [o for o in others if o.verdict != own.verdict]
        keep = own.model_copy(update={"round": rnd, "changed": False})
        if not opposing:
            return keep
        best = max(opposing, key=lambda o: _strength(o, spec.gullibility))
        p = spec.persuasion * float(np.clip(_strength(best, spec.gullibility) - own.confidence + 0.5, 0, 1))
        if u[min(rnd, _MAX_ROUNDS - 1), agents.index(agent)] >= p:
            return keep
        spans = [s.model_copy(update={"agent": agent}) for s in best.spans] if best.verdict == "biased" else []
        return Argument(agent=agent, round=rnd, verdict=best.verdict, confidence=best.confidence, spans=spans,
                        model=SIM_MODEL, changed=True, rationale=f"persuaded by the {best.agent} agent")

    return revise


def decide(reports: Mapping[str, AgentReport], config: Config, *, id: str, gold: int, quoted: bool,
           spec: SimSpec, u: np.ndarray, agents: Sequence[str] | None = None) -> Decision:
    """One simulated item through the real steps: score_reports -> route -> (sad.debate) -> rule_verify."""
    reports = {a: reports[a] for a in config.agents.enabled if a in reports}
    text = f"simulated item {id}"
    scoring = score_reports(reports, config)
    routing = route(reports, scoring.score, config)
    label, debate, verifier = routing.label, None, None
    if routing.route == "debate":
        who = tuple(agents) if agents is not None else roster.names()
        debate = runs.drive(sad.debate([_first(r) for r in reports.values()], _reviser(spec, u, who), config))
        label = debate.label
    if config.verifier.enabled and label == "biased":
        if debate:
            spans = [s for w in debate.rounds[-1].arguments if w.verdict == "biased" for s in w.argument.spans]
        else:
            spans = [s for r in reports.values() if r.verdict == "biased" for s in r.spans]
        verifier = rule_verify(spans, [_QUOTE] if quoted else [], lambda a, b: None, config)
    final = verifier.label if verifier is not None else label
    store = EvidenceStore(text=text, spans=[s for r in reports.values() for s in (*r.spans, *r.counter_spans)])
    return Decision(id=id, text=text, clean_text=text, gold=gold, mode="rule", models={a: SIM_MODEL for a in reports},
                    reports=reports, store=store, scoring=scoring, score=scoring.score, routing=routing,
                    route=routing.route, debate=debate, pre_verifier_label=label, verifier=verifier, label=final,
                    pred=1 if final == "biased" else 0)


def simulate(spec: SimSpec | None = None, *, n_items: int = 1000, seed: int = 0, config: Config | None = None,
             configs: Sequence[str] | Mapping[str, Config] = CONFIGS) -> Simulation:
    """Simulate ``n_items`` items and decide each under every configuration in ``configs`` (ablation names,
    or names mapped to a :class:`Config`), with the same draws for all. Deterministic by ``seed``."""
    import pandas as pd

    spec = spec or SimSpec()
    base = config or Config()
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    agents = roster.names()
    n, k = n_items, len(agents)
    gold = (rng.random(n) < spec.prevalence).astype(int)
    quoted = rng.random(n) < spec.quotation_share
    draws = {"shared": rng.random(n), "common": rng.random(n), "own": rng.random((n, k)),
             "halluc": rng.random((n, k)), "noise": rng.standard_normal((n, k)), "inquote": rng.random((n, k, spec.spans))}
    persuade = rng.random((n, _MAX_ROUNDS, k))
    reports, truth = [], []
    for i in range(n):
        item = {name: arr[i] for name, arr in draws.items()}
        reports.append(_reports(spec, int(gold[i]), bool(quoted[i]), item, agents))
        for j, a in enumerate(agents):
            truth.append({"id": f"sim-{i}", "agent": a, "gold": int(gold[i]), "quoted": bool(quoted[i]),
                          "hallucinated": bool(item["halluc"][j] < spec.hallucination)})
    results = {}
    named = dict(configs) if isinstance(configs, Mapping) else {c: base.ablation(c) for c in configs}
    for name, cfg in named.items():
        t1 = time.perf_counter()
        out = [decide(reports[i], cfg, id=f"sim-{i}", gold=int(gold[i]), quoted=bool(quoted[i]), spec=spec,
                      u=persuade[i], agents=agents) for i in range(n)]
        results[name] = BatchResult(out, wall_s=time.perf_counter() - t1)
    return Simulation(spec, results, pd.DataFrame(truth), time.perf_counter() - t0, agents)


def sweep(name: str, values: Sequence[float], spec: SimSpec | None = None, *, n_items: int = 500, seed: int = 0,
          config: Config | None = None,
          configs: Sequence[str] | Mapping[str, Config] = ("full", "no-debate", "single-agent")) -> pd.DataFrame:
    """Macro F1, precision and recall of each configuration as setting ``name`` takes each of ``values``."""
    import pandas as pd

    spec = spec or SimSpec()
    rows = []
    for v in values:
        m = simulate(SimSpec(**{**spec.model_dump(), name: v}), n_items=n_items, seed=seed, config=config,
                     configs=configs).metrics()
        for cfg_name, r in m.iterrows():
            rows.append({name: v, "config": cfg_name, **r.to_dict()})
    return pd.DataFrame(rows)
