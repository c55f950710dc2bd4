"""A sentence whose call waits for the next Batch API pass fails its article, recognised by the failure's
typed kind (``llm.errors.Failure.DEFERRED``), never by the words of its message."""

from __future__ import annotations

from mabpd_kit.config_corpus import CorpusConfig
from mabpd_kit.corpus.articles import _deferred
from mabpd_kit.corpus.inputs import Doc
from mabpd_kit.llm.errors import Deferred, Failure
from mabpd_kit.mabpd.pipeline import _failed


def _decision(exc: BaseException):
    return _failed({"id": "a#0", "text": "The council met."}, exc)


def test_a_deferred_call_fails_the_article_with_its_reason():
    d = _decision(Deferred("deferred to the next batch (agent abc)"))
    assert d.failure_kind is Failure.DEFERRED
    res = _deferred(Doc(id="a", text="The council met.", meta={"outlet": "X"}), [d], CorpusConfig(), "fp", "dg")
    assert res is not None and res.failed and res.id == "a" and res.meta == {"outlet": "X"}
    assert "deferred to the next batch" in res.error


def test_the_same_words_in_another_failure_are_not_a_deferral():
    d = _decision(ValueError("deferred to the next batch (a model said so)"))
    assert d.failure_kind is None
    assert _deferred(Doc(id="a", text="The council met."), [d], CorpusConfig(), "fp", "dg") is None


def test_the_kind_is_not_stored_in_the_record():
    d = _decision(Deferred("deferred to the next batch (agent abc)"))
    assert "failure_kind" not in d.model_dump() and "_failure_kind" not in d.model_dump_json()
