"""connect(): presets, environment variables, the offline default."""

from __future__ import annotations

import pytest

from mabpd_kit.llm import PRESETS, EndpointError, OfflineError, connect

EXPECTED_URLS = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llama-server": "http://localhost:8080/v1",
    "llamacpp": "http://localhost:8080/v1",  # llama-server's alias
    "lmstudio": "http://localhost:1234/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "groq": "https://api.groq.com/openai/v1",
    "together": "https://api.together.xyz/v1",
}


@pytest.fixture(autouse=True)
def _online(monkeypatch, tmp_path):
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize("name", sorted(EXPECTED_URLS))
def test_each_preset_base_url(name, monkeypatch):
    preset = PRESETS[name]
    if preset.key_env:
        monkeypatch.setenv(preset.key_env, "test-key-for-preset")
    llm = connect(name, model="some-model", quiet=True)
    assert not llm.offline
    assert llm.endpoint == EXPECTED_URLS[name]
    assert llm.model == "some-model" and llm.preset == preset.name and name in (preset.name, *preset.aliases)


def test_presets_cover_the_documented_set():
    assert set(PRESETS) == set(EXPECTED_URLS)


def test_local_preset_needs_no_key_remote_preset_does(monkeypatch):
    for p in PRESETS.values():
        if p.key_env:
            monkeypatch.delenv(p.key_env, raising=False)
    assert not connect("ollama", quiet=True).offline
    with pytest.raises(EndpointError, match="OPENAI_API_KEY"):
        connect("openai")
    monkeypatch.setenv("MABPD_API_KEY", "k-from-mabpd")
    assert connect("groq", quiet=True).endpoint == EXPECTED_URLS["groq"]


def test_environment_configures_endpoint(monkeypatch):
    monkeypatch.setenv("MABPD_BASE_URL", "http://127.0.0.1:9999/v1")
    monkeypatch.setenv("MABPD_MODEL", "env-model")
    llm = connect()
    assert (llm.offline, llm.endpoint, llm.model) == (False, "http://127.0.0.1:9999/v1", "env-model")
    assert connect(model="arg-model").model == "arg-model"  # an argument beats the environment


def test_missing_model_is_a_clear_error(monkeypatch):
    with pytest.raises(EndpointError, match="MABPD_MODEL"):
        connect(base_url="http://127.0.0.1:9999/v1")


def test_unknown_preset_lists_the_choices():
    with pytest.raises(ValueError, match="ollama"):
        connect("nope")


def test_offline_default_prints_one_line(capsys):
    llm = connect()
    out = capsys.readouterr().out
    assert llm.offline and out.count("\n") == 1
    assert "rule-based" in out and "MABPD_BASE_URL" in out
    with pytest.raises(OfflineError, match="rule-based"):
        llm.chat("hello")
    with pytest.raises(OfflineError):
        llm.structured("hello", dict)  # type: ignore[arg-type]
    assert llm.capabilities().model_dump() == dict.fromkeys(
        ["json_schema", "json_object", "logprobs", "top_logprobs", "strict_json_schema"], False)
    assert connect(quiet=True) and capsys.readouterr().out == ""


def test_offline_env_forces_offline_but_explicit_base_url_wins(monkeypatch, capsys):
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    monkeypatch.setenv("MABPD_BASE_URL", "http://127.0.0.1:9999/v1")
    monkeypatch.setenv("MABPD_MODEL", "m")
    assert connect().offline
    assert connect("ollama").offline
    assert "MABPD_OFFLINE=1" in capsys.readouterr().out
    assert not connect(base_url="http://127.0.0.1:9999/v1").offline


def test_a_provider_key_goes_only_to_its_provider(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "openai-secret")
    with pytest.raises(EndpointError, match="MABPD_API_KEY"):
        connect(base_url="https://proxy.example.org/v1", model="m")  # never receives OPENAI_API_KEY
    assert connect(base_url="https://api.openai.com/v1", model="m")._key.get() == "openai-secret"
    monkeypatch.setenv("MABPD_API_KEY", "mabpd-secret")
    assert connect("openai", model="m")._key.get() == "openai-secret"  # the preset's own variable first
    assert connect(base_url="https://proxy.example.org/v1", model="m")._key.get() == "mabpd-secret"


def test_import_is_light():
    """The openai SDK (~1-2 s) and pandas load on first use, not on import."""
    import subprocess
    import sys

    code = "import sys, mabpd_kit.llm, mabpd_kit.testing; print(sorted({'openai', 'pandas', 'httpx2'} & set(sys.modules)))"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "[]"


# -- setup errors are one clear line ------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "env", "says"), [
    ({"base_url": "http://127.0.0.1:9999/v1"}, {}, "set MABPD_MODEL"),
    ({"base_url": "https://llm.example.org/v1", "model": "m"}, {}, "set MABPD_API_KEY"),
    ({"preset": "groq"}, {}, "set GROQ_API_KEY (or MABPD_API_KEY)"),
    ({}, {"MABPD_BASE_URL": "localhost:8000/v1", "MABPD_MODEL": "m"}, "MABPD_BASE_URL 'localhost:8000/v1' is not a URL"),
    ({"base_url": "127.0.0.1:8000", "model": "m"}, {}, "like http://127.0.0.1:8000/v1"),
], ids=["no-model", "remote-no-key", "preset-no-key", "env-url-no-scheme", "arg-url-no-scheme"])
def test_connect_setup_errors_are_one_line_saying_what_to_set(monkeypatch, kwargs, env, says):
    from mabpd_kit.llm import LLMError, SetupError

    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    preset = kwargs.pop("preset", None)
    with pytest.raises(SetupError) as info:
        connect(preset, quiet=True, **kwargs)
    msg = str(info.value)
    assert isinstance(info.value, LLMError) and says in msg and "\n" not in msg
