#!/usr/bin/env bash
# Create .venv and install the project with its test, browser and scale extras (scale: Dask, so the
# Dask executor's LocalCluster tests run in make test and CI instead of being skipped).
# Uses uv when it is on PATH or can be installed into the venv (~10 s), else pip (~40 s).
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-dev,browser,scale}
quiet() { grep -vE 'Location .* is ignored|^\s*$' || true; }
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
UV=""
if command -v uv >/dev/null 2>&1; then UV=$(command -v uv)
elif [ -x "$VENV/bin/uv" ]; then UV="$VENV/bin/uv"
elif "$VENV/bin/python" -m pip install -q uv 2>&1 | quiet; [ -x "$VENV/bin/uv" ]; then UV="$VENV/bin/uv"
fi
if [ -n "$UV" ]; then
  echo "setup: installing mabpd-kit[$EXTRAS] with uv"
  "$UV" pip install -q --python "$VENV/bin/python" -e ".[$EXTRAS]" 2>&1 | quiet
else
  echo "setup: installing mabpd-kit[$EXTRAS] with pip (uv unavailable)"
  "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | quiet
  "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]" 2>&1 | quiet
fi
"$VENV/bin/python" -c "import mabpd_kit; print('setup: mabpd-kit', mabpd_kit.__version__, 'ready in $VENV')"
