"""MABPD end to end: rule-based path, bad inputs, checkpoint resume, ablations, CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.mabpd import BatchResult, Decision, Pipeline
from mabpd_kit.mabpd.store import grounded_score

CFG = Config()


@pytest.fixture(scope="module")
def lex(tiny_lexicon):
    return tiny_lexicon


@pytest.fixture(scope="module")
def pipe(lex):
    return Pipeline(CFG, None, lex)


def test_clear_cases_take_the_fast_paths(pipe):
    d = pipe.analyze("Radical leftists slammed the so-called reform.", id="a", gold=1)
    assert (d.label, d.pred, d.route, d.failed) == ("biased", 1, "strong_fast_path", False)
    assert d.score == pytest.approx(d.scoring.score) and d.score >= CFG.router.strong_at_least
    assert d.verifier is not None and d.verifier.check == "upheld"
    n = pipe.analyze("The council approved the budget on Tuesday.")
    assert (n.label, n.route, n.debate, n.verifier) == ("neutral", "neutral_veto", None, None)
    assert n.usage.calls == 0 and n.mode == "rule"


def test_quoted_loaded_words_are_debated_and_end_neutral(pipe):
    d = pipe.analyze('"This is disgraceful," Senator Maria Lopez said on Thursday.')
    assert d.route == "debate" and d.label == "neutral"
    r1, r2 = d.debate.rounds
    assert r1.arguments[0].agent == "bias" and r1.arguments[0].verdict == "biased"
    assert r2.arguments[0].verdict == "neutral" and r2.arguments[0].argument.changed


def test_trace_is_complete_and_round_trips_through_json(pipe):
    d = pipe.analyze("Radical leftists slammed the so-called reform, critics say.", id="x")
    again = Decision.model_validate_json(json.dumps(d.to_dict()))
    assert again == d
    assert set(d.reports) == {"bias", "evidence", "framing"}
    assert d.store is not None and len(d.spans()) >= 3
    df = d.to_frame()
    assert list(df.agent) == ["bias", "evidence", "framing"] and (df.route == d.route).all()
    assert "router:" in d.explanation()


def test_spans_map_back_to_the_raw_html_input(pipe):
    raw = "<p>Radical&nbsp;leftists   <b>slammed</b> the plan.</p>"
    d = pipe.analyze(raw)
    assert "html" in d.flags and d.clean_text.startswith("Radical leftists slammed")
    for s in d.spans(valid_only=True):
        assert d.clean_text[s.start : s.end] == s.text
        if s.text == "slammed":
            assert raw[s.orig_start : s.orig_end] == "slammed"


def test_bad_inputs_fail_cleanly_and_the_batch_goes_on(pipe):
    items = ["Radical leftists slammed it.", "", None, "bad\x00binary", "<br><br>", "x" * 300_000, 42]
    res = pipe.analyze_many(items, progress=False)
    df = res.to_frame()
    assert list(df.failed) == [False, True, True, True, True, False, True]
    assert "empty" in df.error[1] and "not text" in df.error[2] and "binary" in df.error[3]
    assert "too_long" in res[5].flags and res[5].label == "neutral"
    assert res[0].label == "biased" and res[1].label is None and res[1].pred is None


def test_checkpoint_resume_skips_finished_items(pipe, tmp_path, monkeypatch):
    texts = [f"Item {i}: radical leftists slammed plan number {i}." if i % 2 else f"Neutral item {i}." for i in range(8)]
    ck = tmp_path / "run.jsonl"
    full = pipe.analyze_many(texts, checkpoint=ck, progress=False)
    lines = ck.read_text().splitlines()
    assert len(lines) == 8
    ck.write_text("\n".join(lines[:5]) + "\n" + lines[5][:40])  # killed mid-write: torn last line
    calls = []
    original = pipe.aanalyze

    async def counted(t, id=None, gold=None, **kw):
        calls.append(id)
        return await original(t, id=id, gold=gold, **kw)

    monkeypatch.setattr(pipe, "aanalyze", counted)
    again = pipe.analyze_many(texts, checkpoint=ck, progress=False)
    assert calls == ["5", "6", "7"] and again.resumed == 5
    assert [d.label for d in again] == [d.label for d in full]
    calls.clear()
    changed = list(texts)
    changed[0] = "A different text."
    pipe.analyze_many(changed, checkpoint=ck, progress=False)
    assert calls == ["0"]  # only the edited item is recomputed


def test_rule_based_batches_have_no_deadline(pipe, monkeypatch):
    from mabpd_kit import runs

    seen, real = {}, runs.run
    monkeypatch.setattr(runs, "run", lambda *a, **kw: seen.update(kw) or real(*a, **kw))
    pipe.analyze_many(["The council met."], progress=False)
    assert "deadline_s" in seen and seen["deadline_s"] is None  # driven steps never wait


def test_ids_must_be_unique_and_lengths_match(pipe):
    with pytest.raises(ValueError):
        pipe.analyze_many(["a", "b"], ids=["1", "1"], progress=False)
    with pytest.raises(ValueError):
        pipe.analyze_many(["a", "b"], gold=[1], progress=False)


@pytest.mark.parametrize("name", Config.ABLATIONS)
def test_ablations_keep_the_trace(lex, name):
    d = Pipeline(CFG.ablation(name), None, lex).analyze("Radical leftists slammed the so-called reform.")
    assert not d.failed and d.label == "biased"
    base = name.removesuffix("+verifier")
    if base == "single-agent":  # SPEC 1.9: the BiasAgent's verdict alone, no router, no debate
        assert list(d.reports) == ["bias"] and d.route == "single_agent" and d.debate is None
    if name.startswith("no-") and name[3:] in ("bias", "evidence", "framing"):
        assert name[3:] not in d.reports
    if base == "no-debate":  # SPEC 1.9: score and boundary only
        assert d.route == "no_debate" and d.debate is None and d.score >= CFG.scoring.boundary
    if name in ("no-verifier", "single-agent", "no-debate"):  # the paper's ablations run without the verifier
        assert d.verifier is None
    else:
        assert d.verifier is not None and d.verifier.check == "upheld"


def test_single_agent_is_the_bias_agents_verdict_and_no_debate_the_boundary(lex):
    text = '"This is disgraceful," Senator Maria Lopez said on Thursday.'  # full pipeline: debated, neutral
    single = Pipeline(CFG.ablation("single-agent"), None, lex).analyze(text)
    assert (single.route, single.label) == ("single_agent", single.reports["bias"].verdict) == ("single_agent", "biased")
    assert single.verifier is None and single.debate is None
    with_verifier = Pipeline(CFG.ablation("single-agent+verifier"), None, lex).analyze(text)
    assert (with_verifier.label, with_verifier.verifier.check) == ("neutral", "quotation")
    nd = Pipeline(CFG.ablation("no-debate"), None, lex).analyze(text)
    assert nd.route == "no_debate" and nd.label == ("biased" if nd.score >= CFG.scoring.boundary else "neutral")
    assert nd.verifier is None


def test_batch_frame_columns(pipe):
    res = pipe.analyze_many(["a b", "Radical leftists slammed it."], ids=["u", "v"], gold=[0, 1], progress=False)
    assert isinstance(res, BatchResult)
    cols = ["id", "text", "gold", "label", "pred", "score", "route", "failed", "error", "calls",
            "prompt_tokens", "completion_tokens", "latency_s"]
    assert list(res.to_frame().columns[: len(cols)]) == cols
    assert res.to_frame().pred.tolist() == [0, 1]


def test_cli_analyze_json_and_table(tmp_path, capsys):
    from mabpd_kit.cli import main

    f = tmp_path / "in.txt"
    f.write_text("The so-called reform passed.\n\nThe council met on Tuesday.\n")
    assert main(["analyze", str(f), "--lines", "--format", "json"]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["0", "1"] and out[1]["label"] == "neutral"
    assert main(["analyze", str(f), "--format", "table"]) == 0
    assert "route" in capsys.readouterr().out
    assert main(["analyze", str(tmp_path / "missing.txt")]) == 2


def test_cli_analyze_stdin_to_html(tmp_path, monkeypatch, capsys):
    import io

    from mabpd_kit.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("<p>Radical leftists slammed the so-called reform.</p>"))
    out = tmp_path / "r.html"
    assert main(["analyze", "-", "--format", "html", "-o", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "mabpd-decision" in page and "biased" in page
    assert "&lt;p&gt;" not in page  # the cleaned text is shown, not the markup


def test_truncation_keeps_raw_offsets(lex):
    cfg = CFG.replace(**{"text.truncate_words": 6})
    raw = "<p>The   plan passed.</p> <p>Radical leftists slammed it later, and more words follow here.</p>"
    d = Pipeline(cfg, None, lex).analyze(raw)
    assert "truncated" in d.flags and len(d.clean_text.split()) == 6
    for s in d.spans(valid_only=True):
        assert raw[s.orig_start : s.orig_end] == s.text


def test_batch_metrics_match_scikit_learn(pipe):
    from sklearn.metrics import f1_score

    texts = ["Radical leftists slammed it.", "The council met.", "The so-called reform passed.", "Rain fell.", ""]
    gold = [1, 1, 0, 0, 1]
    m = pipe.analyze_many(texts, gold=gold, progress=False).metrics()
    res = pipe.analyze_many(texts, gold=gold, progress=False)
    preds = [d.pred for d in res][:4]
    assert m["n"] == 4 and m["failed"] == 1
    assert m["macro_f1"] == pytest.approx(f1_score(gold[:4], preds, average="macro"))


def test_redecide_reuses_reports_under_a_new_configuration(pipe, lex, monkeypatch):
    texts = ["Radical leftists slammed the so-called reform.", "The so-called reform passed.",
             '"This is disgraceful," Senator Maria Lopez said.', "The council met."]
    res = pipe.analyze_many(texts, progress=False)
    called = []
    for cls in {type(a) for a in pipe.agents.values()}:
        monkeypatch.setattr(cls, "_rule_report", lambda self, cues: called.append(1))
    strict = Pipeline(CFG.replace(**{"router.strong_at_least": 1.0, "router.moderate_at_least": 1.0}), None, lex)
    for cls in {type(a) for a in strict.agents.values()}:
        monkeypatch.setattr(cls, "_rule_report", lambda self, cues: called.append(1))
    again = strict.redecide_many(res)
    assert not called  # no agent ran again
    assert [d.reports == e.reports for d, e in zip(res, again)] == [True] * 4
    assert res[0].route == "strong_fast_path" and again[0].route == "debate"
    nd = Pipeline(CFG.ablation("no-debate"), None, lex).redecide(res[1])
    assert nd.route == "no_debate" and nd.label == ("biased" if nd.score >= 0.5 else "neutral")
    single = Pipeline(CFG.ablation("single-agent"), None, lex).redecide(res[0])
    assert list(single.reports) == ["bias"]


def test_an_unsupported_language_is_not_decided_by_the_rule_based_agents(lex, monkeypatch):
    LONG = "Radical leftists slammed it. " * 5  # long enough to tell its language (config.text.language_min_chars)
    seen = []
    monkeypatch.setattr("mabpd_kit.language.detect_language", lambda t: seen.append(t) or "zh")
    d = Pipeline(CFG, None, lex).analyze(LONG)
    assert d.failed and d.label is None and d.language == "zh" and "unsupported_language" in d.flags
    assert "'zh'" in d.error and "LLM endpoint" in d.error and "text.languages" in d.error
    ok = Pipeline(CFG.replace(**{"text.languages": ("en", "zh")}), None, lex).analyze(LONG)
    assert not ok.failed and ok.label == "biased" and "unsupported_language" not in ok.flags
    seen.clear()
    off = Pipeline(CFG.replace(**{"text.detect_language": False}), None, lex).analyze(LONG)
    assert not off.failed and off.language is None and seen == []
    monkeypatch.setattr("mabpd_kit.language.detect_language", lambda t: "und")
    und = Pipeline(CFG, None, lex).analyze(LONG)
    assert not und.failed and und.language == "und" and "unsupported_language" not in und.flags


def test_a_short_latin_text_is_taken_to_be_in_the_first_language(pipe):
    d = pipe.analyze("shot worst say senator.")  # py3langid alone says Nigerian Pidgin
    assert not d.failed and d.language == "en"


def test_real_chinese_and_arabic_fail_with_the_reason_in_rule_mode(pipe):
    res = pipe.analyze_many(["市议会以七比二的投票结果延长了图书馆的开放时间。",
                             "صوّت المجلس البلدي بأغلبية سبعة أصوات مقابل صوتين على تمديد ساعات عمل المكتبة.",
                             "The council voted 7-2 to extend library opening hours."], progress=False)
    assert [d.failed for d in res] == [True, True, False]
    assert [d.language for d in res] == ["zh", "ar", "en"]
    assert "unsupported language 'zh'" in res[0].error and "unsupported language 'ar'" in res[1].error


WORDS = ["The", "senator", "slammed", "so-called", "reform", '"independent"', "radical", "leftists", "said",
         "critics", "say", "were", "shot", "worst", "ever", "clearly", "disgraceful", "on", "Monday", "42", ","]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=18))
def test_pipeline_invariants_on_random_sentences(pipe, words):
    d = pipe.analyze(" ".join(words) + ".")
    # a word salad without function words can read as another language to the identifier ("say say
    # disgraceful disgraceful disgraceful." is Nigerian Pidgin to py3langid): that item fails with its
    # reason (the language gate, tested below); the invariants are about the items decided
    assume("unsupported_language" not in d.flags)
    assert not d.failed
    if d.pre_verifier_label == "neutral":  # the verifier never turns neutral into biased
        assert d.label == "neutral" and d.verifier is None
    if d.verifier is not None and d.verifier.overturned:
        assert d.pre_verifier_label == "biased" and d.label == "neutral"
    assert d.score == pytest.approx(sum(d.scoring.weights[a] * grounded_score(d.reports[a]) for a in d.reports))
    assert d.scoring.stated == {a: r.score for a, r in d.reports.items()}
    if d.route == "neutral_veto":
        assert d.score < 0.30 and d.label == "neutral"
    if d.route in ("strong_fast_path", "moderate_fast_path"):
        assert d.pre_verifier_label == "biased" and d.score >= 0.60
    if d.debate:
        assert d.pre_verifier_label == d.debate.rounds[-1].vote.label
    for s in d.spans(valid_only=True):
        assert d.clean_text[s.start : s.end] == s.text


def test_run_options_switch_the_language_step_off_without_a_new_config(pipe):
    german = "Der Senat hat den Haushalt heute ohne Debatte verabschiedet."
    assert pipe.analyze(german).failed
    quiet = pipe.with_options(detect_language=False)
    d = quiet.analyze(german)
    assert not d.failed and d.language is None and "unsupported_language" not in d.flags
    assert quiet.config is pipe.config and quiet.agents is pipe.agents and pipe.detect_language


def test_a_word_salad_taken_for_another_language_fails_with_its_reason(pipe):
    # found by the random-sentence test: forty letters of English words without a function word
    d = pipe.analyze("say say disgraceful disgraceful disgraceful.")
    assert d.failed and "unsupported_language" in d.flags and d.error.startswith("ValueError: unsupported language")
