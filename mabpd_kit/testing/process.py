"""Kill -9 tests: start a batch in a child process, wait until it reaches a chosen point, SIGKILL it."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

__all__ = ["kill_9_when"]


def kill_9_when(cmd: Sequence[str], ready: Callable[[], bool], *, env: Mapping[str, str] | None = None,
                timeout_s: float = 60.0, settle_s: float = 0.0) -> None:
    """Run ``cmd``, wait until ``ready()``, then ``settle_s`` more, then SIGKILL it; an AssertionError when the child
    ends first, ``ready`` never comes, or the child did not die of the signal."""
    proc = subprocess.Popen(list(cmd), env=dict(env) if env is not None else None, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"the run ended before the kill point (exit {proc.returncode}): {err[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the run never reached the kill point in {timeout_s:.0f} s")
            time.sleep(0.02)
        time.sleep(settle_s)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the run was not killed (exit {proc.returncode})"
