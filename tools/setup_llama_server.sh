#!/usr/bin/env bash
# llama.cpp's own llama-server, from the llama-cpp-python sdist's vendored source (the same llama.cpp that
# `make local` builds the bindings from), into the per-machine cache, once: later runs reuse it.
#   $MABPD_LLAMA_SERVER_DIR (default ~/.cache/mabpd-kit/llama-server-VERSION, VERSION from pyproject.toml)
# `make local` builds it already (tools/build_llama_cpp.sh: one compile for both); this builds it where the
# bindings' wheel was cached before that (the wheel's compile again, then the server's own files).
set -euo pipefail
VENV=${VENV:-.venv}
VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
[ -n "$VERSION" ] || { echo "setup-llama-server: no llama-cpp-python version in pyproject.toml" >&2; exit 1; }
DEST=${MABPD_LLAMA_SERVER_DIR:-$HOME/.cache/mabpd-kit/llama-server-$VERSION}
check() { LD_LIBRARY_PATH="$DEST${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$DEST/llama-server" --version >/dev/null 2>&1; }
if [ -x "$DEST/llama-server" ] && check; then
  echo "setup-llama-server: reusing $DEST/llama-server (llama.cpp of llama-cpp-python $VERSION)"
  exit 0
fi
echo "setup-llama-server: building llama-server from llama-cpp-python $VERSION's sdist once for this machine (kept in $DEST)"
WHEELS=${MABPD_WHEELHOUSE:-$HOME/.cache/mabpd-kit/wheels}
VENV="$VENV" WHEELS="$WHEELS" DEST="$DEST" VERSION="$VERSION" bash tools/build_llama_cpp.sh
check || { echo "setup-llama-server: the built $DEST/llama-server does not run" >&2; exit 1; }
