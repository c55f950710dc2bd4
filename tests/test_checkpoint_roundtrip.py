"""Issue 37.2: every record a checkpoint writes reads back, whatever its floats hold.

pydantic writes NaN and +-inf as ``null``, which a ``float`` field rejects on read: RADAR's last-round
stop decision (``s = NaN``) made 33 of 100 claims vanish from a checkpoint the index counted whole.
Here each record type the runner checkpoints (RADAR results, identity debate records, MABPD
decisions, corpus articles) is built from a real record with NaN, inf, -inf or None in its float
fields, sent through the real runner's write and read, and must come back equal; a line that still
cannot be read is counted (in ``len`` and as failed), never skipped.
"""

from __future__ import annotations

import json
import math
import tempfile
import typing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from mabpd_kit import runs
from mabpd_kit.config import Config
from mabpd_kit.radar import RadarDebate, example_claims, run_systems

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.25, 1e308]


def _floaty(ann: Any) -> bool:
    return ann is float or ann is Any or float in typing.get_args(ann)


def _allowed(metadata: list[Any]) -> list[float]:
    """The values of :data:`SPECIAL` a field's bounds (``ge``, ``le``, ``gt``, ``lt``) let through: NaN
    passes none of them, so a bounded field cannot hold it (validation refuses it on construction)."""
    def fits(v: float, m: Any) -> bool:
        bounds = [(getattr(m, "ge", None), v.__ge__), (getattr(m, "le", None), v.__le__),
                  (getattr(m, "gt", None), v.__gt__), (getattr(m, "lt", None), v.__lt__)]
        return all(bound is None or test(bound) is True for bound, test in bounds)

    return [v for v in SPECIAL if all(fits(v, m) for m in metadata)]


def _value(v: Any, ann: Any, draw: Any, metadata: list[Any] = ()) -> Any:
    """``v`` (a field's value, typed ``ann``) with every float in it drawn from :data:`SPECIAL` (or None
    where the type allows None), within the field's bounds."""
    args = typing.get_args(ann)
    if isinstance(v, BaseModel):
        return _mutate(v, draw)
    if isinstance(v, float) or (v is None and _floaty(ann)):
        nullable = ann is Any or type(None) in args
        return draw(st.sampled_from(_allowed(list(metadata)) + ([None] if nullable else [])))
    if isinstance(v, (list, tuple)):
        elem = args[0] if args else Any
        return [_value(x, elem, draw) for x in v]
    if isinstance(v, dict):
        val = args[1] if len(args) == 2 else Any
        return {k: _value(x, val, draw) for k, x in v.items()}
    return v


def _mutate(rec: BaseModel, draw: Any) -> dict[str, Any]:
    return {name: _value(getattr(rec, name), f.annotation, draw, f.metadata)
            for name, f in type(rec).model_fields.items()}


def _n_floats(rec: Any) -> int:
    if isinstance(rec, BaseModel):
        return sum(_n_floats(getattr(rec, n)) for n in type(rec).model_fields)
    if isinstance(rec, float):
        return 1
    if isinstance(rec, (list, tuple)):
        return sum(_n_floats(x) for x in rec)
    if isinstance(rec, dict):
        return sum(_n_floats(x) for x in rec.values())
    return 0


def _canon(rec: BaseModel) -> str:
    """A record as text that tells NaN, inf, -inf, -0.0 and None apart (Python's json writes the constants)."""
    return json.dumps(rec.model_dump(mode="json"), sort_keys=True)


# -- one real record of every type the runner checkpoints ---------------------------------------------
def _radar() -> BaseModel:
    ex = example_claims().iloc[1]
    res = RadarDebate(Config(), system="no-early-stopping").run(ex.claim, ex.evidence, id="r1", gold=ex.label)
    assert math.isnan(res.decisions[-1].s)  # the last round's stop margin: the value that was lost
    return res


def _identity() -> BaseModel:
    from mabpd_kit.identity import Question, run_debate

    qs = [Question(id="q1", question="Which letter comes first?", answer="A", options={"A": "a", "B": "b"})]
    return run_debate(qs, None, conditions=["vanilla"], progress=False).records[0]


def _decision() -> BaseModel:
    from mabpd_kit.mabpd import Pipeline

    p = Pipeline()
    texts = ["The senator's reckless, disastrous plan was slammed by critics who said it would destroy jobs.",
             "Critics slammed the mayor's outrageous scheme, which officials said would gut the city budget."]
    decisions = [p.analyze(t) for t in texts]
    return next((d for d in decisions if d.debate is not None and d.scoring is not None), decisions[0])


def _article() -> BaseModel:
    from mabpd_kit.corpus.articles import analyze_doc
    from mabpd_kit.corpus.inputs import Doc
    from mabpd_kit.mabpd import Pipeline

    text = ("The senator's reckless, disastrous plan was slammed by critics. The council met on Tuesday. "
            "Officials said the budget passed.")
    return analyze_doc(Pipeline(), Doc(id="a1", text=text, meta={"outlet": "x", "weight": 1.5, "year": None}))


SAMPLES = {"radar": _radar, "identity": _identity, "mabpd": _decision, "corpus": _article}
_BUILT: dict[str, BaseModel] = {}


def sample(kind: str) -> BaseModel:
    if kind not in _BUILT:
        _BUILT[kind] = SAMPLES[kind]()
    return _BUILT[kind]


def through_checkpoint(rec: BaseModel, folder: Path) -> runs.Results:
    """``rec`` written by the real runner to a checkpoint, and the results read back from it."""
    async def step(item: runs.Item) -> BaseModel:
        return rec

    def fail(item: runs.Item, exc: BaseException) -> BaseModel:
        raise AssertionError(f"the step failed: {exc}")

    return runs.run([runs.Item(rec.id, None, "d")], step, record=type(rec), fail=fail,
                    checkpoint=folder / "ck.jsonl")


@pytest.mark.parametrize("kind", list(SAMPLES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_record_type_reads_back_with_nan_inf_and_none_in_its_floats(kind, data):
    base = sample(kind)
    assert _n_floats(base) >= 3, "the sample record should have floats to vary"
    rec = type(base).model_validate(_mutate(base, data.draw))
    with tempfile.TemporaryDirectory() as d:
        res = through_checkpoint(rec, Path(d))
        back = list(res)
        assert len(res) == 1 and len(back) == 1 and res.unreadable == 0 and res.n_failed == int(rec.failed)
        assert _canon(back[0]) == _canon(rec)
        again = runs.Results.read(Path(d) / "ck.jsonl", type(rec))  # a fresh reader of the same file
        assert [_canon(r) for r in again] == [_canon(rec)]


def test_a_checkpoint_an_earlier_version_wrote_reads_its_nulls_as_nan(tmp_path, monkeypatch):
    # the old writer (pydantic's JSON: NaN -> null) made lines a float field rejected; they now read as NaN
    from mabpd_kit.runs import checkpoint

    monkeypatch.setattr(checkpoint, "dumps", lambda rec: rec.model_dump_json())
    rec = sample("radar")
    through_checkpoint(rec, tmp_path)
    path = tmp_path / "ck.jsonl"
    assert "NaN" not in path.read_text() and '"s":null' in path.read_text()
    back = list(runs.Results.read(path, type(rec)))
    assert len(back) == 1 and math.isnan(back[0].decisions[-1].s)


class _Other(BaseModel):
    """A record of another shape (another version's, say): its line is whole but not a RadarResult."""

    id: str
    claim: int


def test_a_line_that_cannot_be_read_is_counted_as_failed_not_skipped(tmp_path, capsys):
    from mabpd_kit.runs.checkpoint import line

    rec = sample("radar")
    through_checkpoint(rec, tmp_path)
    path = tmp_path / "ck.jsonl"
    with path.open("a") as fh:
        fh.write(line("r2", "d", "fp", _Other(id="r2", claim=3)))
    res = runs.Results.read(path, type(rec))
    got = list(res)
    assert len(got) == 1 and res.unreadable == 1
    assert len(res) == 2 and res.n_failed == 1  # the file holds 2 records; the unreadable one is a failure
    err = capsys.readouterr().err
    assert "1 record(s)" in err and "could not be read back" in err and "r2" in err


# -- RADAR batches read back every claim they wrote ---------------------------------------------------
def _claims(n: int) -> pd.DataFrame:
    ex = example_claims()
    return pd.DataFrame([dict(id=f"c{i:03d}", claim=f"{ex.claim.iloc[i % 3]} (variant {i})",
                              label=ex.label.iloc[i % 3], evidence=list(ex.evidence.iloc[i % 3])) for i in range(n)])


def test_run_many_and_run_systems_read_back_every_claim_offline(tmp_path, capsys):
    claims = _claims(30)
    res = RadarDebate(Config()).run_many(claims, checkpoint=tmp_path / "r.jsonl", progress=True)
    assert [r.id for r in res] == list(claims.id) and len(res) == 30 and res.unreadable == 0
    assert sum(r.stop.reason == "max_rounds" for r in res) > 0  # the records that used to vanish
    assert "30 claims, 0 failed" in capsys.readouterr().out
    again = RadarDebate(Config()).run_many(claims, checkpoint=tmp_path / "r.jsonl", progress=False)
    assert again.resumed == 30 and [_canon(r) for r in again] == [_canon(r) for r in res]
    table, results = run_systems(claims, checkpoint_dir=tmp_path / "sys", progress=False)
    for name, r in results.items():
        assert [x.id for x in r] == list(claims.id), name
    assert (table["n"] == 30).all() and (table["failed"] == 0).all()


def test_run_many_and_run_systems_read_back_every_claim_against_a_server(fake_server, tmp_path):
    from mabpd_kit.llm import connect
    from mabpd_kit.testing import Reply, last_user, synth_logprobs, system_prompt

    def script(req: dict) -> Any:
        sysp = system_prompt(req)
        if "JUDGE" in sysp:  # no logprobs: the Judge's stated verdict; s stays NaN on the last round
            return "CONTINUE" if "STOP, CONTINUE" in last_user(req) else "HALF-TRUE"
        if "POLITICIAN" in sysp or "SCIENTIST" in sysp:
            return "The record supports it [E1]."
        return Reply(content="ok", logprobs=synth_logprobs("ok", 5))

    srv = fake_server(script)
    cfg = Config().replace(**{"llm.timeout_s": 10.0})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", quiet=True, config=cfg)
    claims = _claims(6)
    res = RadarDebate(cfg, llm).run_many(claims, checkpoint=tmp_path / "r.jsonl", progress=False)
    got = list(res)
    assert [r.id for r in got] == list(claims.id) and len(res) == 6 and res.unreadable == 0
    assert not [r.error for r in got if r.failed]
    assert all(r.rounds_run == 3 and math.isnan(r.stop.s) for r in got)
    table, results = run_systems(claims.head(4), config=cfg, llm=llm, checkpoint_dir=tmp_path / "sys", progress=False)
    for name, r in results.items():
        assert [x.id for x in r] == list(claims.id[:4]) and not r.failed, name
    assert (table["n"] == 4).all() and (table["failed"] == 0).all()
