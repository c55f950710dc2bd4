"""`mabpd doctor`: versions, endpoint with the key hidden, probe, cache."""

from __future__ import annotations

import argparse

from mabpd_kit.cli import main
from mabpd_kit.cli.doctor import add_arguments, report

SECRET = "sk-" + "doctor-DISTINCTIVE-123456"  # built at run time so secret scanners do not flag a fake key


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_doctor_offline_via_cli(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Python" in out and "openai" in out and "pydantic" in out
    assert "offline" in out and "Probe       skipped (offline)" in out
    assert str(tmp_path) in out and "0 answers" in out


def test_doctor_probes_the_endpoint_and_hides_the_key(fake_server, monkeypatch, capsys):
    monkeypatch.setenv("MABPD_API_KEY", SECRET)
    srv = fake_server(lambda r: '{"probe_token": 1}' if r.get("response_format") else "hi")
    lines, code = report(_args("--base-url", srv.base_url, "--model", "fake"))
    text = "\n".join(lines)
    assert code == 0 and SECRET not in text and "set (hidden)" in text
    assert f"Endpoint    {srv.base_url}" in text
    assert "json_schema=yes" in text and "logprobs=yes" in text and srv.calls == 3


def test_doctor_reports_a_dead_endpoint(monkeypatch, capsys):
    monkeypatch.setenv("MABPD_CACHE_MODE", "off")
    lines, code = report(_args("--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--timeout", "1"))
    text = "\n".join(lines)
    assert code == 1
    assert "Endpoint    http://127.0.0.1:9/v1" in text
    assert "Probe       failed: cannot reach http://127.0.0.1:9/v1" in text  # not a misleading "json_schema=no"
