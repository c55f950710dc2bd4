"""One typed, frozen configuration object holding every threshold and weight (the role weights' defaults are
the roster's lines). ``cfg.replace(**{"sad.rounds": 3})`` is a changed copy; ``save``/``load``: TOML or JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer, model_validator

from mabpd_kit import roster
from mabpd_kit.config_corpus import ArticleScoreConfig, CorpusConfig
from mabpd_kit.types import FrozenModel as _Frozen

__all__ = ["Config", "TextConfig", "LexiconConfig", "ScoringConfig", "RouterConfig", "SADConfig", "VerifierConfig",
           "AgentsConfig", "LLMConfig", "RadarConfig", "IdentityConfig", "MetricsConfig", "CorpusConfig",
           "ArticleScoreConfig"]


class TextConfig(_Frozen):
    """SPEC 1.1 cleaning and span validation."""

    fuzzy_ratio: float = Field(0.90, ge=0, le=1, description="no longer used: a quote matches up to typography only, never a changed word (text.validate_span)")
    evidence_max_share: float = Field(0.8, gt=0, le=1, description="a span of 3+ words covering this share of its sentence's words or more is the claim, not evidence for it")
    max_chars: int = Field(200_000, gt=0, description="longer inputs are flagged and cut, never crash a batch")
    truncate_words: int | None = Field(None, description="article truncation to N words (None = no cut)")
    article_words: int = Field(600, gt=0, description="the paper's HyperPartisan cut: the benchmark default of `evaluate --dataset hyperpartisan`")
    languages: tuple[str, ...] = Field(("en",), description="languages the rule-based agents know; other text is flagged unsupported_language")
    detect_language: bool = Field(True, description="detect the language of each item and flag unsupported ones")
    language_min_chars: int = Field(
        40, ge=0,
        description="an item in Latin script with fewer characters than this (whitespace not counted) is too short "
                    "to tell its language ('shot worst say senator.' looks like Nigerian Pidgin) and is taken to be "
                    "in languages[0]; an article's language: corpus.language_min_chars")


class LexiconConfig(_Frozen):
    """SPEC 2."""

    bands: tuple[float, ...] = (0.60, 0.70, 0.80, 0.90)
    confidence_floor: float = Field(0.45, ge=0, le=1, description="lexicon signal counts only above this")
    signal: Literal["max", "noisy_or"] = Field(
        "max", description="rule-based BiasAgent score: the highest-scoring match above the floor (SPEC 2), or the noisy-OR of all matched bands")
    path: str | None = Field(None, description="lexicon JSON; None = the shipped resource")
    max_gap_words: int = Field(4, ge=1, le=10, description="words a '...' in a lexicon phrase may stand for (ram ... through)")


def _added_weights() -> dict[str, float]:
    return {s.name: s.weight for s in roster.specs() if f"w_{s.name}" not in ScoringConfig.model_fields}


_PLAN: list[Any] = [-1, ()]  # roster version, ((name, field or "", roster weight), ...)


def _weight_plan() -> tuple[tuple[str, str, float], ...]:
    """Per roster agent: name, ``w_<name>`` field ("" if none) and roster weight (rebuilt when the roster changes)."""
    if _PLAN[0] != roster.version():
        fields = ScoringConfig.model_fields
        _PLAN[:] = [roster.version(), tuple((s.name, f"w_{s.name}" if f"w_{s.name}" in fields else "", s.weight)
                                            for s in roster.specs())]
    return _PLAN[1]


class ScoringConfig(_Frozen):
    """SPEC 1.4: score = 0.50*bias + 0.25*evidence + 0.25*framing; fixed 0.50 boundary. The one home of the role
    weights (:attr:`weights`); an agent added to the roster has its weight in ``w_added``."""

    w_bias: float = roster.get("bias").weight
    w_evidence: float = roster.get("evidence").weight
    w_framing: float = roster.get("framing").weight
    w_added: dict[str, float] = Field(
        default_factory=_added_weights,
        description="agent -> weight for agents added to the roster beyond the SPEC's three (default: the roster line's weight)")
    boundary: float = 0.50

    @property
    def weights(self) -> dict[str, float]:
        """Role -> weight for every agent on the roster, in roster order."""
        added = self.w_added
        return {name: getattr(self, field) if field else added.get(name, w) for name, field, w in _weight_plan()}

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """An empty ``w_added`` is left out, so checkpoint fingerprints of the SPEC's three agents do not change."""
        data = handler(self)
        if not self.w_added and not (info.context or {}).get("all_fields"):
            data.pop("w_added", None)
        return data


class RouterConfig(_Frozen):
    """SPEC 1.5 consensus router cut-offs; ``mode`` ``boundary`` and ``verdict`` are the ablations'."""

    mode: Literal["consensus", "boundary", "verdict"] = "consensus"
    neutral_veto_below: float = 0.30
    strong_at_least: float = 0.75
    moderate_at_least: float = 0.60
    moderate_min_agents: int = 2


class SADConfig(_Frozen):
    """SPEC 1.6 Structured Argument Debate."""

    enabled: bool = True
    rounds: int = Field(2, ge=1, description="rounds in all, round 1 independent")
    max_spans: int = 5
    neutral_floor: float = Field(0.5, description="f_a = max(q_a, neutral_floor) for a neutral verdict")
    agreement_gain: float = Field(0.2, description="g_a = 1 + gain * (share agreeing - 0.5)")
    agreement_over: Literal["all", "weighted"] = Field(
        "all", description="g_a's share: all other agents (SPEC 1.6) or only those whose argument carries weight (f > 0)")
    vote_boundary: float = 0.50
    evidence_weighting: bool = Field(True, description="ablation: False sets f_a = 1")
    stop_on_agreement: bool = True
    anonymise: bool = Field(False, description="SPEC 4: unlabelled transcripts in SAD rounds")
    dual_threshold: bool = Field(False, description="SPEC 1.6 option: stop after a round iff s >= tau_s and c >= tau_v")
    tau_s: float = Field(0.3, ge=-1, le=1, description="SAD dual threshold: s = (agents agreeing with the vote - others) / agents")
    tau_v: float = Field(0.75, ge=0, le=1, description="SAD dual threshold: c = max(B, N) / (B + N)")
    concession: float = Field(0.8, ge=0, le=1, description="rule-based agents: confidence factor kept when switching to a grounded opposing verdict")
    doubt: float = Field(0.8, ge=0, le=1, description="rule-based agents: confidence factor when all others disagree but none refutes their spans")


class VerifierConfig(_Frozen):
    """SPEC 1.7: may only turn biased into neutral."""

    enabled: bool = True
    check_quotation: bool = True
    check_protected: bool = True
    check_invalid: bool = Field(True, description="kept so saved configurations load; SPEC 1.7 makes this check mandatory "
                                "(a biased decision with no valid span is always overturned), so it has no effect")


class AgentsConfig(_Frozen):
    """Which agents take part (ablations) and per-agent model choice (heterogeneous LLMs)."""

    enabled: tuple[str, ...] = Field(default_factory=roster.names, description="the agents that take part (default: the roster, mabpd_kit.roster)")
    models: dict[str, str] = Field(default_factory=dict, description="agent -> model name; missing = endpoint default")
    temperature: float = 0.0
    max_tokens: int = 800
    cue_bands: dict[str, float] = Field(
        default_factory=lambda: {"so_called": 0.90, "scare_quotes": 0.80, "loaded_attribution": 0.70,
                                 "vague_source": 0.70, "assertion_marker": 0.70, "superlative": 0.60,
                                 "passive_agency": 0.60},
        description="rule-based framing/evidence cue -> score band (lexicon-style ordinal anchors, set by design, not fitted)",
    )
    attribution_window: int = Field(40, ge=0, description="rule-based: chars around a quotation searched for a speech verb")
    injection_guard: bool = Field(
        True, description="instruction-like text addressed to the model inside an item (mabpd_kit.injection) flags the "
        "item, is withheld from the prompts and can ground no verdict (spans in it or named by it are invalid)")


class LLMConfig(_Frozen):
    """Client behaviour; endpoint and key come from the environment, never from here."""

    concurrency: int | None = Field(None, ge=1, description="per-endpoint in-flight limit shared by all agents; None: the server's own (llama-server's total_slots, 1 for llama-cpp-python's server), else 8")
    timeout_s: float = Field(60.0, gt=0, description="seconds one call may take (on a local server, plus timeout_per_1k_chars_s per 1,000 prompt characters)")
    timeout_per_1k_chars_s: float = Field(10.0, ge=0, description="local servers compute the whole prompt first: seconds added to timeout_s per 1,000 prompt characters")
    server: str = Field("auto", description="the server's kind (llm/servers/): auto (asked from the server) or a kind's name or alias: openai-compatible, openai, vllm, ollama, llama-server, llama-cpp-python, lmstudio, openrouter, groq, together")
    local_progress_cpu_s: float = Field(1.0, gt=0, description="a local server this machine's kit started that used at least this many CPU-seconds during one time-out window is still computing: the call waits another window instead of timing out (a busy laptop is not a hung server)")
    local_max_wait_s: float | None = Field(None, gt=0, description="at most this many seconds for one call to a local server that keeps making progress; None: no bound but the item deadline")
    max_retries: int = 3
    max_tokens_cap: int = Field(2048, gt=0, description="llama-server: a call's max_tokens at most this, and this when it names none (without one it writes until its slot's context is full)")
    repeat_penalty: float = Field(1.1, ge=1.0, description="llama-server: the repetition penalty sent with every call (llama-cpp-python's server applies 1.1 by default, llama-server 1.0, under which greedy SmolLM2 repeats one sentence until max_tokens)")
    grammar_max_items: int = Field(1, ge=1, description="llama.cpp servers (their grammar follows the reply schema): a list in a reply at most this many items (a small model repeats its one quote until max_tokens)")
    grammar_max_chars: int = Field(80, ge=1, description="llama.cpp servers: a free-text field (rationale, quote, explanation) at most this many characters; a bigger local model that reasons at length: raise both")
    max_reply_bytes: int = Field(16_000_000, gt=0, description="a reply body longer than this is not read further (never held whole): its item fails with that reason")
    cache_mode: Literal["off", "record", "replay", "auto"] = "auto"
    repair_retries: int = 1
    item_deadline_s: float | None = Field(None, gt=0, description="one item's wall-clock budget (all its calls); past it the item fails with that reason. None: 300 s on a remote server, none on a local one (its per-call time-outs bound each call)")
    probe_ttl_h: float = Field(24.0, gt=0, description="hours a stored capability probe result stays valid")
    prices_per_mtok: dict[str, tuple[float, float] | tuple[float, float, float]] = Field(
        default_factory=dict,
        description="model -> (USD per 1M prompt tokens, per 1M completion tokens[, per 1M cached prompt tokens])")
    batch_discount: float = Field(0.5, ge=0, lt=1, description="share of the price the Batch API takes off (OpenAI: 50%)")
    batch_poll_s: float = Field(30.0, gt=0, description="seconds between two looks at a submitted batch")
    batch_window: str = Field("24h", description="the Batch API completion window")
    strict_schemas: bool = Field(True, description="send strict json_schema (all fields required, no extra keys) where accepted")


class RadarConfig(_Frozen):
    """SPEC 3."""

    top_m: int = 20
    max_rounds: int = 3
    tau_s: float = -0.6
    tau_v: float = 0.75
    labels: tuple[str, ...] = ("TRUE", "HALF-TRUE", "FALSE")
    k_samples: int = 5
    grid_tau_s: tuple[float, float, float] = (-1.0, 1.0, 0.05)
    grid_tau_v: tuple[float, float, float] = (0.0, 0.95, 0.05)
    cost_per_round: float = 0.0
    temperature: float = Field(0.0, ge=0, description="debaters' (Politician, Scientist) sampling temperature")
    max_tokens: int = Field(800, gt=0, description="completion budget of a debater turn")
    objective: Literal["accuracy", "macro_f1"] = "accuracy"
    prob_source: Literal["auto", "logprobs", "samples", "structured"] = Field(
        "auto", description="Judge probabilities: auto = logprobs if probed, else k samples, else stated")
    top_logprobs: int = Field(10, ge=1, le=20, description="alternatives per token asked for (logprobs source)")
    sample_temperature: float = Field(0.7, gt=0, description="temperature of the k samples (samples source)")
    evidence: Literal["retrieved", "gold"] = Field("retrieved", description="BM25 top-m pool or gold evidence")


class IdentityConfig(_Frozen):
    """SPEC 4."""

    n_agents: int = 5
    unparsed: Literal["drop", "neither"] = Field(
        "neither", description="a pair whose current answer did not parse: counted as neither conforming nor obstinate (SPEC 4), or dropped")
    rounds: int = Field(2, description="debate rounds after the independent round 0")
    seed: int = Field(0, description="seeds the anonymised answer order, agent sampling and the simulator")
    bootstrap: int = Field(1000, gt=0, description="bootstrap resamples (over questions) for the measures' CIs")
    temperature: float = Field(1.0, ge=0, description="agent sampling temperature; > 0 so independent agents can disagree")
    max_tokens: int = Field(1024, gt=0, description="completion budget per agent answer")
    max_response_chars: int = Field(2000, gt=0, description="previous-round responses quoted in prompts are cut to this")
    sim_w_self: float = Field(1.0, ge=0, description="belief simulator: weight of an agent's own previous answer")
    sim_w_peer: float = Field(1.0, ge=0, description="belief simulator: weight of each peer's previous answer")
    sim_prior_strength: float = Field(1.0, gt=0, description="belief simulator: Dirichlet mass of an agent's own prior belief")
    sim_competence: float = Field(0.5, gt=0, lt=1, description="belief simulator: mean prior probability on the correct option")
    sim_n_options: int = Field(4, ge=2, description="belief simulator: options per question")


class MetricsConfig(_Frozen):
    """SPEC 5."""

    bootstrap_resamples: int = 10_000
    seed: int = 0
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the Wilson intervals of error rates (leaning audit)")
    min_items: int = Field(100, description="a lesson states a metric on fewer items only as an interval marked "
                                            "'too few to conclude' (data.metric_text)")


class Config(_Frozen):
    """Every default of the toolkit. Frozen: use :meth:`replace` for variants."""

    text: TextConfig = TextConfig()
    lexicon: LexiconConfig = LexiconConfig()
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)  # made when a Config is: the roster of the day
    router: RouterConfig = RouterConfig()
    sad: SADConfig = SADConfig()
    verifier: VerifierConfig = VerifierConfig()
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    llm: LLMConfig = LLMConfig()
    radar: RadarConfig = RadarConfig()
    identity: IdentityConfig = IdentityConfig()
    metrics: MetricsConfig = MetricsConfig()
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)  # built when first asked for: it reads fit artefacts

    @model_validator(mode="after")
    def _check(self) -> Config:
        unknown = (set(self.agents.enabled) | set(self.scoring.w_added)) - set(roster.names())
        if unknown:
            raise ValueError(f"unknown agents {sorted(unknown)}; choose from {', '.join(roster.names())}")
        if self.router.mode == "verdict" and len(self.agents.enabled) != 1:
            raise ValueError("router.mode 'verdict' decides by one agent's verdict: enable exactly one agent")
        return self

    def replace(self, **changes: Any) -> Config:
        """A validated copy with changes: ``cfg.replace(**{"scoring.w_bias": 0.6})`` or ``cfg.replace(scoring={...})``."""
        data = self.model_dump(context={"all_fields": True})
        for key, value in changes.items():
            parts = key.replace("__", ".").split(".")
            node = data
            for p in parts[:-1]:
                if p not in node or not isinstance(node[p], dict):
                    raise KeyError(f"no configuration section {key!r}")
                node = node[p]
            leaf = parts[-1]
            if leaf not in node:
                raise KeyError(f"no configuration field {key!r}")
            if isinstance(node[leaf], dict) and isinstance(value, dict) and len(parts) == 1:
                node[leaf] = {**node[leaf], **value}
            else:
                node[leaf] = value
        return Config.model_validate(data)

    def ablation(self, name: str) -> Config:
        """Named variants (SPEC 1.9, :attr:`ABLATIONS`): ``single-agent`` (the BiasAgent's verdict) and ``no-debate``
        (the score against the boundary) have the verifier off as in the paper; ``+verifier`` keeps it on."""
        name = name.strip().lower().replace("_", "-")
        name, plus_verifier = (name[: -len("+verifier")], True) if name.endswith("+verifier") else (name, False)
        if name == "full" and not plus_verifier:
            return self
        if name == "single-agent":
            cfg = self.replace(**{"agents.enabled": ("bias",),  # SPEC 1.9: the BiasAgent alone
                                  "router.mode": "verdict", "verifier.enabled": False})
        elif name == "no-debate":
            cfg = self.replace(**{"router.mode": "boundary", "verifier.enabled": False})
        elif name == "no-verifier" and not plus_verifier:
            return self.replace(**{"verifier.enabled": False})
        elif name == "no-evidence-weighting" and not plus_verifier:
            return self.replace(**{"sad.evidence_weighting": False})
        elif name.startswith("no-") and name[3:] in roster.names() and not plus_verifier:
            return self.replace(**{"agents.enabled": tuple(a for a in self.agents.enabled if a != name[3:])})
        else:
            raise KeyError(f"unknown ablation {name + ('+verifier' if plus_verifier else '')!r}; "
                           f"choose from {', '.join(_ablations())}")
        return cfg.replace(**{"verifier.enabled": True}) if plus_verifier else cfg

    ABLATIONS: ClassVar[tuple[str, ...]] = ()  # filled below

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        data = self.model_dump(mode="json")
        if path.suffix.lower() == ".toml":
            import tomli_w

            path.write_bytes(tomli_w.dumps(_toml_safe(data)).encode())
        else:
            path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Config:
        path = Path(path)
        if path.suffix.lower() == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # pragma: no cover - python 3.10
                import tomli as tomllib
            data = tomllib.loads(path.read_text())
        else:
            data = json.loads(path.read_text())
        return cls.model_validate(data)


def _toml_safe(obj: Any) -> Any:
    """TOML has no null: drop None values (they are the defaults anyway)."""
    if isinstance(obj, dict):
        return {k: _toml_safe(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_toml_safe(v) for v in obj]
    return obj


def _ablations() -> tuple[str, ...]:
    return ("full", "single-agent", "no-debate", "single-agent+verifier", "no-debate+verifier", "no-verifier",
            "no-evidence-weighting", *(f"no-{a}" for a in roster.names()))


Config.ABLATIONS = _ablations()  # the built-in roster's; Config.ablation() accepts no-<agent> of any agent on it
