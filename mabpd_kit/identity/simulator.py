"""The belief simulator: Dirichlet agents with a planted identity weight (``w_self``, ``w_peer``), to
check the measures: plant ``w_peer > w_self`` and the IBC comes out positive."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from mabpd_kit.config import Config
from mabpd_kit.identity.logs import CONDITIONS, KEY, Condition
from mabpd_kit.identity.measures import ibc
from mabpd_kit.identity.questions import LETTERS, Question, normalise_number
from mabpd_kit.types import FrozenModel

__all__ = ["SIMULATOR_MODEL", "BeliefSpec", "recovered_gap", "recovery_sweep", "simulate", "simulate_questions"]

SIMULATOR_MODEL = "belief-simulator"
"""The ``model`` column of simulated rows."""


FloatOrPerAgent = float | tuple[float, ...]


class BeliefSpec(FrozenModel):
    """A planted population (each weight one number or one per agent)."""

    n_agents: int = Field(5, ge=2)
    rounds: int = Field(2, ge=1)
    n_options: int = Field(4, ge=2, le=26)
    w_self: FloatOrPerAgent = 1.0
    w_peer: FloatOrPerAgent = 1.0
    competence: FloatOrPerAgent = 0.5
    prior_strength: float = Field(1.0, gt=0)
    paired: bool = Field(True, description="both conditions reuse the same random draws (common random numbers)")

    @classmethod
    def from_config(cls, config: Config | None = None, **overrides: Any) -> BeliefSpec:
        """Defaults from ``config.identity`` (agents, rounds, sim_* fields), then ``overrides``."""
        c = (config or Config()).identity
        base = {
            "n_agents": c.n_agents, "rounds": c.rounds, "n_options": c.sim_n_options, "w_self": c.sim_w_self,
            "w_peer": c.sim_w_peer, "competence": c.sim_competence, "prior_strength": c.sim_prior_strength,
        }
        return cls(**{**base, **overrides})

    def per_agent(self, name: str) -> np.ndarray:
        """``w_self`` / ``w_peer`` / ``competence`` as one value per agent."""
        v = np.asarray(getattr(self, name), dtype=float).reshape(-1)
        if v.size == 1:
            return np.full(self.n_agents, float(v[0]))
        if v.size != self.n_agents:
            raise ValueError(f"{name} has {v.size} values for {self.n_agents} agents")
        return v

    def weights(self, condition: Condition) -> tuple[np.ndarray, np.ndarray]:
        """(self weight, peer weight) per agent under ``condition``."""
        ws, wp = self.per_agent("w_self"), self.per_agent("w_peer")
        if condition == "anonymised":
            w = (ws + (self.n_agents - 1) * wp) / self.n_agents
            return w, w
        return ws, wp

    def mass(self, rnd: int) -> np.ndarray:
        """Each agent's Dirichlet mass when answering in round ``rnd`` (same in both conditions)."""
        ws, wp = self.per_agent("w_self"), self.per_agent("w_peer")
        return self.prior_strength + rnd * (ws + (self.n_agents - 1) * wp)


def _draw(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Categorical draws by inverse CDF: ``probs`` (..., K), one uniform per draw."""
    cdf = np.cumsum(probs, axis=-1)
    return np.minimum((u[..., None] > cdf).sum(axis=-1), probs.shape[-1] - 1)


def _simulate_indices(spec: BeliefSpec, gold: np.ndarray, seed: int,
                      conditions: Sequence[Condition]) -> dict[str, np.ndarray]:
    """Chosen option indices, shape (rounds + 1, questions, agents), per condition."""
    q, n, k = len(gold), spec.n_agents, spec.n_options
    rng = np.random.default_rng([seed, 0])
    comp = spec.per_agent("competence")
    m = np.repeat(((1 - comp) / (k - 1))[:, None], k, axis=1)  # (N, K) mean prior belief
    m = np.broadcast_to(m, (q, n, k)).copy()
    m[np.arange(q), :, gold] = comp[None, :]
    g = rng.gamma(k * m)  # Dirichlet(K m) via normalised gammas: one belief per (question, agent)
    p = g / g.sum(axis=-1, keepdims=True)
    eye = np.eye(k)
    out: dict[str, np.ndarray] = {}
    for ci, cond in enumerate(conditions):
        u = np.random.default_rng([seed, 1 if spec.paired else 1 + ci]).random((spec.rounds + 1, q, n))
        ws, wp = spec.weights(cond)
        alpha = spec.prior_strength * p
        y = _draw(p, u[0])
        ys = [y]
        for t in range(1, spec.rounds + 1):
            own = eye[y]  # (Q, N, K) one-hot of each agent's previous answer
            peers = own.sum(axis=1, keepdims=True) - own
            alpha = alpha + ws[None, :, None] * own + wp[None, :, None] * peers
            y = _draw(alpha / alpha.sum(axis=-1, keepdims=True), u[t])
            ys.append(y)
        out[cond] = np.stack(ys)
    return out


def _logs_from_indices(idx: dict[str, np.ndarray], labels: np.ndarray, gold: np.ndarray, qids: np.ndarray,
                       spec: BeliefSpec) -> pd.DataFrame:
    """Simulated choices -> a log frame with the runner's columns (plus ``mass``)."""
    frames = []
    for cond, y in idx.items():
        r, q, n = y.shape
        rr, qq, aa = np.meshgrid(np.arange(r), np.arange(q), np.arange(n), indexing="ij")
        flat = y.ravel()
        qi = qq.ravel()
        frames.append(pd.DataFrame({
            "condition": cond, "question": qids[qi], "agent": aa.ravel(), "round": rr.ravel(),
            "answer": labels[qi, flat], "correct": flat == gold[qi], "parsed": True, "parse_method": "simulated",
            "gold": labels[qi, gold[qi]], "raw": "", "error": None, "source": "simulator", "model": SIMULATOR_MODEL,
            "prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0, "cached": False,
            "mass": np.stack([spec.mass(t) for t in range(r)])[rr.ravel(), aa.ravel()],
        }))
    return pd.concat(frames, ignore_index=True)


def simulate(spec: BeliefSpec | None = None, n_questions: int = 300, seed: int = 0,
             conditions: Sequence[Condition] = CONDITIONS) -> pd.DataFrame:
    """Simulated logs for ``n_questions`` abstract questions with a random right option each."""
    spec = spec or BeliefSpec()
    rng = np.random.default_rng([seed, 2])
    gold = rng.integers(0, spec.n_options, size=n_questions)
    labels = np.broadcast_to(np.array(list(LETTERS[: spec.n_options])), (n_questions, spec.n_options))
    qids = np.array([f"sim-{i:04d}" for i in range(n_questions)])
    return _logs_from_indices(_simulate_indices(spec, gold, seed, conditions), labels, gold, qids, spec)


def _numeric_options(gold: str, k: int) -> list[str]:
    """The gold number first, then k-1 plausible distractors (gold +- 1, +- 2, ...)."""
    g = Decimal(normalise_number(gold) or "0")
    opts = [g]
    step = 1
    while len(opts) < k:
        for cand in (g + step, g - step):
            if cand not in opts and len(opts) < k:
                opts.append(cand)
        step += 1
    return [normalise_number(str(o)) or str(o) for o in opts]


def simulate_questions(questions: Sequence[Question], spec: BeliefSpec | None = None, seed: int = 0,
                       conditions: Sequence[Condition] = CONDITIONS) -> pd.DataFrame:
    """The simulator answering real questions (letters, or the gold number among distractors)."""
    spec = spec or BeliefSpec()
    k = spec.n_options
    labels = np.empty((len(questions), k), dtype=object)
    gold = np.zeros(len(questions), dtype=int)
    for i, q in enumerate(questions):
        if q.kind == "numeric":
            labels[i] = _numeric_options(q.answer, k)
        else:
            letters = (q.letters or LETTERS[:k])[:k]
            if q.answer not in letters:
                raise ValueError(f"question {q.id}: gold {q.answer!r} not among the first {k} options")
            labels[i] = list(letters) + [f"?{j}" for j in range(k - len(letters))]
            gold[i] = letters.index(q.answer)
    qids = np.array([q.id for q in questions])
    logs = _logs_from_indices(_simulate_indices(spec, gold, seed, conditions), labels, gold, qids, spec)
    return logs.sort_values(KEY, kind="stable").reset_index(drop=True)


def recovered_gap(logs: pd.DataFrame, spec: BeliefSpec, *, config: Config | None = None) -> float:
    """The planted ``w_peer - w_self`` read back from the round-1 IBC."""
    r1 = ibc(logs, rounds=[1], ci=False, config=config).estimate
    return float(r1 * np.mean(spec.mass(1)))


def recovery_sweep(gaps: Sequence[float] = (-0.5, 0.0, 0.5, 1.0), seeds: Sequence[int] = (0, 1, 2, 3, 4), *,
                   base_weight: float = 1.0, n_questions: int = 300, spec: BeliefSpec | None = None) -> pd.DataFrame:
    """Plant ``w_peer - w_self = gap`` around ``base``: one row per (gap, seed) with IBCs and the recovered gap."""
    base = spec or BeliefSpec()
    rows = []
    for gap in gaps:
        s = base.model_copy(update={"w_self": base_weight - gap / 2, "w_peer": base_weight + gap / 2})
        if min(s.per_agent("w_self").min(), s.per_agent("w_peer").min()) < 0:
            raise ValueError(f"gap {gap} needs base_weight >= {abs(gap) / 2}")
        for seed in seeds:
            logs = simulate(s, n_questions=n_questions, seed=seed)
            rows.append({
                "gap": gap, "seed": seed, "w_self": s.w_self, "w_peer": s.w_peer, "ibc": ibc(logs, ci=False).estimate,
                "ibc_round1": ibc(logs, rounds=[1], ci=False).estimate, "recovered_gap": recovered_gap(logs, s),
            })
    return pd.DataFrame(rows)

