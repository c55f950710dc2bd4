"""The capability probe stores only what the answers settle: positive results and clear
refusals, for ``config.llm.probe_ttl_h``; never a fault burst's garbled replies, time-outs or 5xx."""

from __future__ import annotations

import argparse
import time

import pytest

from mabpd_kit.cli.doctor import add_arguments, report
from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, ResponseCache, connect, registry
from mabpd_kit.testing import Reply

ALL_YES = {"json_schema": True, "json_object": True, "logprobs": True, "top_logprobs": True, "strict_json_schema": True}


def healthy(r: dict) -> str:
    return '{"probe_token": 1}' if r.get("response_format") else "hi"


def _llm(srv, tmp_path, **cfg):
    config = Config().replace(**{"llm.max_retries": 0, "llm.timeout_s": 2.0, **cfg})
    return connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, config=config, quiet=True)


def _stored(srv, tmp_path) -> dict | None:
    return ResponseCache(tmp_path).get_capabilities(registry.endpoint_key(srv.base_url, "fake"))


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture(autouse=True)
def _fresh_process():
    registry.forget()
    yield
    registry.forget()


@pytest.mark.parametrize("garbled", [Reply(content=""), Reply(content="{{{ not json"), Reply(content="I cannot help.")],
                         ids=["empty", "malformed", "refusal-text"])
def test_garbled_replies_are_not_stored_and_a_healthy_server_is_probed_again(fake_server, tmp_path, garbled):
    srv = fake_server(lambda r: garbled if r.get("response_format") else "hi")
    caps = _llm(srv, tmp_path).capabilities()
    assert not caps.json_schema and not caps.json_object  # this process only
    assert registry.undecided(registry.endpoint_key(srv.base_url, "fake")) == ("json_schema", "json_object", "strict_json_schema")
    assert _stored(srv, tmp_path) is None
    registry.forget()  # a later process, the burst over
    srv.script = healthy
    assert _llm(srv, tmp_path).capabilities().model_dump() == ALL_YES
    assert _stored(srv, tmp_path) == ALL_YES


def test_probe_answers_never_come_from_the_response_cache(fake_server, tmp_path):
    """A garbled probe reply recorded by the response cache would be replayed by every re-probe."""
    srv = fake_server(lambda r: "garbage" if r.get("response_format") else "hi")
    _llm(srv, tmp_path).capabilities()
    registry.forget()
    srv.script = healthy
    assert _llm(srv, tmp_path).capabilities().json_schema


def test_a_clear_refusal_is_stored_but_a_400_about_something_else_a_5xx_or_a_timeout_is_not(fake_server, tmp_path):
    srv = fake_server(healthy, supports_json_schema=False)  # 400 "response_format json_schema is not supported"
    assert _llm(srv, tmp_path).capabilities().model_dump() == {**ALL_YES, "json_schema": False, "strict_json_schema": False}
    assert _stored(srv, tmp_path) == {**ALL_YES, "json_schema": False, "strict_json_schema": False}

    other = fake_server(lambda r: Reply(status=400, error="context length exceeded") if r.get("response_format") else "hi")
    assert not _llm(other, tmp_path).capabilities().json_schema
    assert _stored(other, tmp_path) is None
    for fault in (Reply(status=503), Reply(hang=True)):  # not an answer about features: raised, nothing stored
        down = fake_server(lambda r, fault=fault: fault, hang_limit_s=5.0)
        with pytest.raises(EndpointError):
            _llm(down, tmp_path, **{"llm.timeout_s": 0.3}).capabilities()
        assert _stored(down, tmp_path) is None


def test_stored_results_expire_after_the_ttl(fake_server, tmp_path):
    srv = fake_server(healthy)
    _llm(srv, tmp_path).capabilities()
    n = srv.calls
    registry.forget()
    assert _llm(srv, tmp_path).capabilities().json_schema and srv.calls == n  # within the TTL: no call
    registry.forget()
    cache = ResponseCache(tmp_path)
    cache._conn().execute("UPDATE capabilities SET created = ?", (time.time() - 2 * 3600,))
    _llm(srv, tmp_path, **{"llm.probe_ttl_h": 1.0}).capabilities()
    assert srv.calls == n + 3  # two hours old, TTL one hour: probed again


def test_doctor_refresh_probes_again_and_overwrites(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))
    srv = fake_server(healthy, supports_json_schema=False)
    lines, code = report(_args("--base-url", srv.base_url, "--model", "fake"))
    assert code == 0 and "json_schema=no" in "\n".join(lines)
    srv.supports_json_schema = True  # the server was upgraded
    registry.forget()
    assert "json_schema=no" in "\n".join(report(_args("--base-url", srv.base_url, "--model", "fake"))[0])  # stored
    registry.forget()
    lines, code = report(_args("--base-url", srv.base_url, "--model", "fake", "--refresh"))
    assert code == 0 and "json_schema=yes" in "\n".join(lines)
    assert _stored(srv, tmp_path)["json_schema"] is True


def test_doctor_shows_unsettled_features_as_unknown(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))
    srv = fake_server(lambda r: "" if r.get("response_format") else "hi")
    text = "\n".join(report(_args("--base-url", srv.base_url, "--model", "fake"))[0])
    assert "json_schema=?" in text and "json_object=?" in text and "not stored" in text
    assert _stored(srv, tmp_path) is None


def test_strict_is_probed_first_and_a_server_refusing_it_still_gets_json_schema(fake_server, tmp_path):
    srv = fake_server(healthy, supports_strict=False)
    caps = _llm(srv, tmp_path).capabilities()
    assert caps.json_schema and not caps.strict_json_schema
    sent = [r["response_format"]["json_schema"]["strict"] for r in srv.requests
            if (r.get("response_format") or {}).get("type") == "json_schema"]
    assert sent == [True, False]
    assert _stored(srv, tmp_path) == {**ALL_YES, "strict_json_schema": False}
