#!/usr/bin/env bash
# Build llama.cpp's own llama-server from the llama-cpp-python sdist's vendored source (the same llama.cpp that
# `make local` builds the bindings from) into the per-machine cache, once: later runs reuse it.
#   $MABPD_LLAMA_SERVER_DIR (default ~/.cache/mabpd-kit/llama-server-VERSION, VERSION from pyproject.toml)
# The binary and its .so files sit side by side (the kit runs it with LD_LIBRARY_PATH set to that folder); a
# build here links statically (-DBUILD_SHARED_LIBS=OFF), so the folder holds one self-contained binary.
# A build costs ~50 minutes on a loaded 2-core machine (3009 s on 2026-12-06), a few minutes on a laptop.
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
command -v cmake >/dev/null || { echo "setup-llama-server: cmake is needed to build llama-server (apt install cmake)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "setup-llama-server: building llama-server from llama-cpp-python $VERSION's sdist once for this machine (kept in $DEST)"
t0=$(date +%s)
"$VENV/bin/python" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$WORK"
tar -xzf "$(ls "$WORK"/llama*cpp*python-"$VERSION".tar.gz | head -1)" -C "$WORK"
SRC=$(ls -d "$WORK"/llama*cpp*python-"$VERSION"/vendor/llama.cpp | head -1)
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_BLAS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DGGML_NATIVE=ON >/dev/null
cmake --build "$WORK/build" --target llama-server -j "$(nproc)" >/dev/null
mkdir -p "$DEST.tmp"
cp "$WORK/build/bin/llama-server" "$DEST.tmp/"
find "$WORK/build/bin" -maxdepth 1 -name '*.so*' -exec cp -P {} "$DEST.tmp/" \;  # none when linked statically
rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
check || { echo "setup-llama-server: the built $DEST/llama-server does not run" >&2; exit 1; }
echo "setup-llama-server: built in $(( $(date +%s) - t0 )) s: $DEST/llama-server"
