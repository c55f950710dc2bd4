"""mabpd-kit as a class meets it: ``pip install``, then the notebooks, with no repository around them.

1. Build the sdist and, from it, the wheel (``uv build``, offline from uv's cache when it can).
2. Install the wheel into a fresh virtual environment outside the repository (no
   ``--system-site-packages``), pinned to the versions of the environment running the tests,
   from uv's cache (``--offline``); only when a package is missing from the cache does it go to
   the package index once (which fills the cache for the next run).
3. ``mabpd demo`` and ``mabpd lexicon check`` run from the installed package.
4. Copies of ``notebooks/`` and ``solutions/`` in a temporary folder run top to bottom (``FAST=1``,
   offline) on the installed kernel and are exported to HTML: every lesson without benchmark data
   (the shipped samples) and with it (``MABPD_DATA_DIR``, when present), every solution without,
   and two lessons in full mode (``FAST=0``), where progress bars are drawn.
   Each export must also give every chart alternative text (nbconvert's "Alternative text is
   missing") and contain no frozen progress bar.

``make test-install`` (part of ``make test``; ``make test-unit`` leaves this file out) runs it with two workers; the timings of the build and
install are written to test-artifacts/install_timings.txt.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
SHARED_DATA = os.environ.get("MABPD_DATA_DIR") or (str(ROOT.parent / "shared" / "data")
                                                   if (ROOT.parent / "shared" / "data").is_dir() else "")
NB_TIMEOUT_S = 300
FULL_MODE = ("00", "03")  # lessons also run with FAST=0 (samples, ~10 s each): their loops draw progress bars
FROZEN_BAR = re.compile(r"(?<![\d.])0%\|")
SECRET_ENV = ("MABPD_BASE_URL", "MABPD_API_KEY", "MABPD_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONPATH",
              "VIRTUAL_ENV", "MABPD_DATA_DIR")


def _uv() -> str | None:
    for cand in (shutil.which("uv"), str(Path(sys.executable).with_name("uv"))):
        if cand and Path(cand).exists():
            return cand
    return None


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def _clean_env(tmp: Path, data_dir: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV and not k.startswith("JUPYTER")}
    env.update(MABPD_OFFLINE="1", FAST="1", JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               JUPYTER_DATA_DIR=str(tmp / "jupyter-data"), JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
               IPYTHONDIR=str(tmp / "ipython"), MABPD_CACHE_DIR=str(tmp / "mabpd-cache"), MPLBACKEND="Agg")
    if data_dir:
        env["MABPD_DATA_DIR"] = data_dir
    return env


def _pins() -> list[str]:
    """``name==version`` of every distribution in this environment except mabpd-kit itself."""
    from importlib import metadata

    pins = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower().replace("_", "-") != "mabpd-kit":
            pins[name.lower()] = f"{name}=={dist.version}"
    return sorted(pins.values())


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv with the built wheel; returns its paths and how long each step took."""
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not available (tools/setup_venv.sh installs it into .venv)")
    tmp = tmp_path_factory.mktemp("install")
    timings: dict[str, float] = {}
    # build from a copy of the sources, so parallel workers (and other checkouts' build/) never collide
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "mabpd_kit", src / "mabpd_kit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    t0 = time.perf_counter()
    build = _run([uv, "build", "--offline", "-q", "-o", str(tmp / "dist"), str(src)], timeout=300)
    if build.returncode != 0:
        build = _run([uv, "build", "-q", "-o", str(tmp / "dist"), str(src)], timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    timings["build sdist + wheel"] = time.perf_counter() - t0
    wheel = next((tmp / "dist").glob("mabpd_kit-*.whl"))

    venv = tmp / "venv"
    t0 = time.perf_counter()
    made = _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], timeout=120)
    assert made.returncode == 0, made.stderr
    pins = tmp / "constraints.txt"
    pins.write_text("\n".join(_pins()) + "\n")
    install = [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "-c", str(pins), str(wheel)]
    res = _run([*install[:3], "--offline", *install[3:]], timeout=600)
    timings["install (offline, uv cache)"] = time.perf_counter() - t0
    if res.returncode != 0:  # something is not in the cache yet: one online install fills it
        t0 = time.perf_counter()
        res = _run(install, timeout=900)
        timings["install (online, cache was incomplete)"] = time.perf_counter() - t0
        if res.returncode != 0:
            pytest.skip(f"could not install the wheel offline or online: {res.stderr[-1500:]}")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "install_timings.txt").write_text("".join(f"{k}: {v:.1f} s\n" for k, v in timings.items()))
    return {"tmp": tmp, "venv": venv, "bin": venv / "bin", "wheel": wheel, "timings": timings}


def test_wheel_ships_samples_and_lexicon_seeds(installed):
    import zipfile

    names = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "mabpd_kit/resources/samples/samples.jsonl" in names
    assert "mabpd_kit/resources/lexicon/taxonomy.toml" in names and "mabpd_kit/resources/lexicon/protected.toml" in names
    assert sum(n.startswith("mabpd_kit/resources/lexicon/categories/") for n in names) >= 30
    assert "mabpd_kit/resources/lexicon.json" in names and "mabpd_kit/resources/datasets.json" in names


def test_installed_package_is_not_the_checkout(installed, tmp_path):
    code = ("import mabpd_kit as mk; print(mk.__file__); df = mk.data.samples(); print(len(df));"
            "print(mk.lexicon.seeds_dir().is_dir()); print(mk.data.have('babe'))")
    res = _run([str(installed["bin"] / "python"), "-c", code], cwd=tmp_path, env=_clean_env(tmp_path), timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    where, n, seeds, have = res.stdout.split()
    assert where.startswith(str(installed["venv"])) and str(ROOT) not in where
    assert (n, seeds, have) == ("28", "True", "False")


def test_cli_demo_and_lexicon_check_from_the_install(installed, tmp_path):
    env = _clean_env(tmp_path)
    demo = _run([str(installed["bin"] / "mabpd"), "demo", "--out", "demo.html"], cwd=tmp_path, env=env, timeout=300)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "28 sample items" in demo.stdout and (tmp_path / "demo.html").stat().st_size > 10_000
    check = _run([str(installed["bin"] / "mabpd"), "lexicon", "check"], cwd=tmp_path, env=env, timeout=120)
    assert check.returncode == 0 and check.stdout.startswith("ok:"), check.stdout + check.stderr


def _cases() -> list:
    cases = [pytest.param(p, "", id=f"samples-notebooks/{p.name}") for p in LESSONS]
    cases += [pytest.param(p, "", id=f"samples-solutions/{p.name}") for p in SOLUTIONS]
    cases += [pytest.param(p, "data", id=f"data-notebooks/{p.name}",
                           marks=pytest.mark.skipif(not SHARED_DATA, reason="no benchmark data (MABPD_DATA_DIR)"))
              for p in LESSONS]
    # full mode (FAST=0) draws the progress bars: the export must keep their final state, not "0%|"
    cases += [pytest.param(p, "full", id=f"full-notebooks/{p.name}") for p in LESSONS if p.name[:2] in FULL_MODE]
    return cases


@pytest.mark.parametrize(("notebook", "mode"), _cases())
def test_notebook_runs_from_the_install(installed, notebook: Path, mode: str, tmp_path):
    """Run one copied notebook on the installed kernel, outside the repository, and export it."""
    work = tmp_path / notebook.parent.name
    work.mkdir()
    shutil.copy(notebook, work / notebook.name)
    env = _clean_env(tmp_path, SHARED_DATA if mode == "data" else "")
    if mode == "full":
        env["FAST"] = "0"
    t0 = time.perf_counter()
    res = _run([str(installed["bin"] / "jupyter"), "nbconvert", "--to", "html", "--execute",
                f"--ExecutePreprocessor.timeout={NB_TIMEOUT_S}", "--ExecutePreprocessor.kernel_name=python3",
                "--ExecutePreprocessor.store_widget_state=False", "--output-dir", str(tmp_path / "out"),
                str(work / notebook.name)], cwd=work, env=env, timeout=NB_TIMEOUT_S + 120)
    secs = time.perf_counter() - t0
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "install_notebook_times.txt", "a") as fh:
        fh.write(f"{mode or 'samples'}\t{notebook.parent.name}/{notebook.name}\t{secs:.1f} s\trc={res.returncode}\n")
    tail = "\n".join(re.sub(r"\x1b\[[0-9;]*m", "", res.stderr).splitlines()[-25:])
    assert res.returncode == 0, f"{notebook.parent.name}/{notebook.name} failed from the installed package:\n{tail}"
    html = (tmp_path / "out" / notebook.with_suffix(".html").name).read_text(encoding="utf-8")
    assert "Alternative text is missing" not in res.stderr, (
        f"{notebook.name}: an image has no alt text (build charts with mk.viz / mk.viz.altair())")
    frozen = FROZEN_BAR.search(html)
    assert not frozen, f"{notebook.name}: a frozen progress bar ('0%|') is left in the export"
    assert json.dumps(str(ROOT))[1:-1] not in html, f"{notebook.name}: the export mentions the repository path"
