"""A call to a local server the kit started does not time out while that server keeps computing
(mabpd_kit.llm.progress): a busy laptop is not a hung server; an idle (hung) server still times out."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, connect, progress, transport

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _process(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.fixture
def busy():
    proc = _process("while True: pass")  # a server computing: it uses CPU all the time
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def idle():
    proc = _process("import time; time.sleep(600)")  # a hung server: alive, listening, using no CPU
    yield proc
    proc.kill()
    proc.wait()


def _local_llm(srv, monkeypatch, pid: int, **llm_cfg):
    monkeypatch.setattr(transport, "server_pid", lambda endpoint: pid)
    # windows of 1 s, progress 0.02 CPU-seconds a window: a busy loop shows it even on a machine at load 10
    # (0.6 s and 0.05 failed a make test there, 2026-12-06); a sleeping process never does
    cfg = Config().replace(**{"llm.server": "llama-server", "llm.timeout_s": 1.0, "llm.timeout_per_1k_chars_s": 0.0,
                              "llm.local_progress_cpu_s": 0.02, **{f"llm.{k}": v for k, v in llm_cfg.items()}})
    return connect(base_url=srv.base_url, model="fake", cache_mode="off", config=cfg, quiet=True)


def test_cpu_seconds_grow_for_a_busy_process_and_not_for_an_idle_one(busy, idle):
    time.sleep(0.3)
    b0, i0 = progress.cpu_seconds(busy.pid), progress.cpu_seconds(idle.pid)
    time.sleep(1.5)  # a busy loop beside ten others on 2 cores still gets 0.2 CPU-seconds in 1.5 s
    assert progress.cpu_seconds(busy.pid) - b0 > 0.05
    assert progress.cpu_seconds(idle.pid) - i0 < 0.05
    assert progress.cpu_seconds(2**22 + 12345) is None  # no such process


def test_a_call_waits_past_its_time_out_while_the_server_computes(fake_server, monkeypatch, busy):
    srv = fake_server(lambda r: "done", latency=3.0)  # answers after 3 windows of 1 s
    llm = _local_llm(srv, monkeypatch, busy.pid)
    t0 = time.perf_counter()
    assert llm.chat("hi").text == "done"
    assert time.perf_counter() - t0 >= 3.0 and srv.calls == 1  # waited, and sent once


def test_a_call_to_a_server_that_makes_no_progress_times_out_after_one_window(fake_server, monkeypatch, idle):
    srv = fake_server(lambda r: "done", latency=5.0)
    llm = _local_llm(srv, monkeypatch, idle.pid)
    t0 = time.perf_counter()
    with pytest.raises(EndpointError, match="no answer"):
        llm.chat("hi")
    assert time.perf_counter() - t0 < 4.5 and srv.calls == 1  # one window (an answer would take 5 s), sent once


def test_local_max_wait_bounds_a_call_even_while_the_server_computes(fake_server, monkeypatch, busy):
    srv = fake_server(lambda r: "done", latency=6.0)
    llm = _local_llm(srv, monkeypatch, busy.pid, local_max_wait_s=1.5)
    t0 = time.perf_counter()
    with pytest.raises(EndpointError, match="no answer"):
        llm.chat("hi")
    assert time.perf_counter() - t0 < 5.5  # the answer would take 6 s


def test_only_a_server_the_kit_started_is_watched(monkeypatch):
    from mabpd_kit.llm import local

    monkeypatch.setattr(local, "running", lambda model_path=None: None)
    monkeypatch.setattr(local, "started_servers", lambda: {8123: 4242})
    assert progress.server_pid("http://127.0.0.1:8123/v1") == 4242
    assert progress.server_pid("http://127.0.0.1:9999/v1") == 4242  # a proxy in front of the one server we started
    assert progress.server_pid("https://api.example.com/v1") is None  # remote: never
    monkeypatch.setattr(local, "started_servers", lambda: {8123: 4242, 8124: 4343})
    assert progress.server_pid("http://127.0.0.1:9999/v1") is None  # which one? none: the plain time-out holds


def test_a_server_the_kit_started_is_known_without_asking_it(fake_server, monkeypatch):
    """A busy llama-cpp-python server answers /v1/models only after the request it computes: the probe timed out
    and the kit took it for a generic remote server (60 s time-outs, sent again). The kit knows what it started."""
    from mabpd_kit.llm import client, local, registry, servers

    srv = fake_server(lambda r: "ok")
    monkeypatch.setattr(progress, "server_pid", lambda endpoint: 4242)
    monkeypatch.setattr(servers, "probe_server", lambda *a, **k: pytest.fail("the kit's own server was probed"))
    monkeypatch.setattr(client, "probe_server", lambda *a, **k: pytest.fail("the kit's own server was probed"))
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="off", quiet=True)
    llm.chat("hi")
    assert registry.profile(llm.endpoint).name == local.KIND
