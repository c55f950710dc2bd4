"""The change rule of server kinds: a new kind is one object and its registration. Defined here, in the test,
it is picked up by connect()'s presets, profile detection (and its hooks), the course pack's key check, the
doctor and FakeLLMServer's emulation, with no other file changed."""

from __future__ import annotations

import argparse
import json
import urllib.request

import pytest
from pydantic import BaseModel

from mabpd_kit.llm import PRESETS, EndpointError, Failure, SetupError, connect, registry, servers
from mabpd_kit.llm.cache import ResponseCache
from mabpd_kit.llm.servers import ServerKind

KEY = "toy-DISTINCTIVE-5e1f0a9c"


class Toy(ServerKind):
    """A server that takes a schema only as ``{"type": "toy_schema", "schema": S}`` (and refuses OpenAI's form with
    a 418 naming the field), computes two requests at once and reads a request field of its own."""

    def response_format(self, schema, mode, *, name, strict):
        if mode == "json_schema":
            return {"type": "toy_schema", "schema": self.schema(schema)}
        return super().response_format(schema, mode, name=name, strict=strict)

    def concurrency(self, info):
        return 2

    def extra_body(self):
        return {"toy_cache": True}

    def refusal(self, fmt):
        if fmt.get("type") == "json_schema":
            return 418, {"error": {"message": "toy: unknown response_format type json_schema"}}
        return None


TOY = Toy(name="toy-server", aliases=("toy",), base_url="https://toy.example.org/v1", key_vars=("TOY_API_KEY",),
          default_model="toy-1", needs_key=True, owned_by=("toyco",), hosts=("toy.example.org",),
          emulated_slots=2)  # its host is known: never asked (no network in these tests)


class Answer(BaseModel):
    verdict: str


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.delenv("TOY_API_KEY", raising=False)
    registry.forget()
    servers.register(TOY)
    yield TOY
    servers.KINDS.pop(TOY.name)
    registry.forget()


def test_connect_reaches_a_new_kind_by_name_and_alias_with_its_own_key(toy, monkeypatch):
    assert PRESETS["toy"] is toy and PRESETS["toy-server"] is toy
    with pytest.raises(SetupError, match="TOY_API_KEY"):
        connect("toy", quiet=True)  # a remote-style kind that needs a key, and none is set
    monkeypatch.setenv("TOY_API_KEY", KEY)
    llm = connect("toy", quiet=True)
    assert (llm.endpoint, llm.model, llm.preset, llm.key_env) == ("https://toy.example.org/v1", "toy-1", "toy-server",
                                                                  "TOY_API_KEY")
    assert llm._key.get() == KEY


def test_the_emulated_kind_is_detected_and_its_hooks_shape_every_request(toy, fake_server):
    srv = fake_server(lambda r: '{"verdict": "neutral"}', emulate="toy", models=["toy-1"])
    with urllib.request.urlopen(srv.base_url + "/models") as resp:  # the emulation says what it is
        assert json.load(resp)["data"][0]["owned_by"] == "toyco"
    llm = connect(base_url=srv.base_url, model="toy-1", quiet=True, cache_mode="off")
    out = llm.structured("Is this biased?", Answer)
    assert llm.server is toy and llm.concurrency == 2
    assert out.value.verdict == "neutral" and out.mode == "json_schema"
    sent = srv.requests[-1]
    assert sent["response_format"]["type"] == "toy_schema" and sent["toy_cache"] is True
    assert srv.quirks.schemas and "verdict" in srv.quirks.schemas[-1]["properties"]
    with pytest.raises(EndpointError) as info:  # OpenAI's form: the emulation refuses it, typed as a refusal
        llm.chat("hi", response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {}}})
    assert info.value.status == 418 and info.value.kind is Failure.REFUSED_FIELD


def test_the_pack_refuses_a_key_held_in_the_new_kinds_variable(toy, tmp_path, monkeypatch):
    from mabpd_kit.llm.pack import KEY_VARS, write_pack

    assert "TOY_API_KEY" in KEY_VARS
    monkeypatch.setenv("TOY_API_KEY", KEY)
    ResponseCache(tmp_path).put("k", {"text": f"leaked {KEY}", "model": "m"}, model="m")
    with pytest.raises(SetupError, match="API key"):
        write_pack(tmp_path / "p.json", cache_dir=tmp_path, endpoint="http://x/v1", model="m", server="toy-server")
    assert not (tmp_path / "p.json").exists()


def test_the_doctor_shows_the_new_kinds_key_variable_hidden(toy, monkeypatch):
    from mabpd_kit.cli.doctor import add_arguments, report

    monkeypatch.setenv("TOY_API_KEY", KEY)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    lines, _ = report(parser.parse_args(["--preset", "toy", "--no-probe"]))
    text = "\n".join(lines)
    assert "TOY_API_KEY" in text and KEY not in text and "set (hidden)" in text
    assert "Endpoint    https://toy.example.org/v1" in text and "Server      toy-server" in text


def test_config_may_name_the_new_kind(toy):
    assert servers.detect("http://10.0.0.1:1/v1", {}, forced="toy") is toy
    with pytest.raises(ValueError, match="toy-server"):
        servers.detect("http://10.0.0.1:1/v1", {}, forced="no-such-server")
