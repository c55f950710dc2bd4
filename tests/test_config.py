"""The configuration object carries SPEC.md's defaults and round-trips through files."""

import pytest
from pydantic import ValidationError

from mabpd_kit.config import Config


def test_spec_defaults():
    c = Config()
    assert (c.scoring.w_bias, c.scoring.w_evidence, c.scoring.w_framing) == (0.50, 0.25, 0.25)
    assert c.scoring.boundary == 0.50
    assert (c.router.neutral_veto_below, c.router.moderate_at_least, c.router.strong_at_least) == (0.30, 0.60, 0.75)
    assert c.sad.rounds == 2 and c.sad.max_spans == 5 and c.sad.neutral_floor == 0.5 and c.sad.agreement_gain == 0.2
    assert c.scoring.weights == {"bias": 0.50, "evidence": 0.25, "framing": 0.25}
    assert c.text.fuzzy_ratio == 0.90 and c.lexicon.confidence_floor == 0.45
    assert c.lexicon.bands == (0.60, 0.70, 0.80, 0.90)
    assert (c.radar.top_m, c.radar.max_rounds, c.radar.tau_s, c.radar.tau_v) == (20, 3, -0.6, 0.75)
    assert (c.identity.n_agents, c.identity.rounds) == (5, 2)
    assert c.metrics.bootstrap_resamples == 10_000
    assert c.llm.concurrency is None  # the server's own limit (llm/servers/), else 8
    assert c.llm.item_deadline_s is None  # 300 s remote, none on a local server


def test_frozen_and_replace_does_not_mutate():
    c = Config()
    with pytest.raises(ValidationError):
        c.sad.rounds = 5  # type: ignore[misc]
    c2 = c.replace(**{"sad.rounds": 3, "scoring.boundary": 0.4})
    assert (c2.sad.rounds, c2.scoring.boundary) == (3, 0.4)
    assert (c.sad.rounds, c.scoring.boundary) == (2, 0.5)
    c3 = c.replace(scoring={"w_bias": 0.6})
    assert c3.scoring.w_bias == 0.6 and c3.scoring.w_evidence == 0.25


def test_replace_validates_and_rejects_unknown_keys():
    c = Config()
    with pytest.raises(KeyError):
        c.replace(**{"sad.nonexistent": 1})
    with pytest.raises(KeyError):
        c.replace(**{"nosection.x": 1})
    with pytest.raises(ValidationError):
        c.replace(**{"sad.rounds": 0})
    with pytest.raises(ValidationError):
        c.replace(**{"agents.enabled": ("bias", "sentiment")})


@pytest.mark.parametrize("name,check", [
    ("single-agent", lambda c: (c.agents.enabled, c.router.mode, c.verifier.enabled) == (("bias",), "verdict", False)),
    ("no-debate", lambda c: (c.router.mode, c.verifier.enabled) == ("boundary", False)),
    ("single-agent+verifier", lambda c: (c.agents.enabled, c.router.mode, c.verifier.enabled) == (("bias",), "verdict", True)),
    ("no-debate+verifier", lambda c: (c.router.mode, c.verifier.enabled) == ("boundary", True)),
    ("no-verifier", lambda c: c.verifier.enabled is False),
    ("no-evidence-weighting", lambda c: c.sad.evidence_weighting is False),
    ("no-framing", lambda c: c.agents.enabled == ("bias", "evidence")),
    ("full", lambda c: c == Config()),
])
def test_ablations(name, check):
    assert check(Config().ablation(name))


def test_verdict_mode_needs_exactly_one_agent():
    with pytest.raises(ValidationError, match="exactly one agent"):
        Config().replace(**{"router.mode": "verdict"})


def test_unknown_ablation_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown ablation"):
        Config().ablation("no-brain")


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_file_round_trip(tmp_path, suffix):
    c = Config().replace(**{"sad.rounds": 4, "agents.models": {"bias": "m1"}, "text.truncate_words": 600})
    path = c.save(tmp_path / f"lab{suffix}")
    assert Config.load(path) == c
