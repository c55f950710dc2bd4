#!/usr/bin/env bash
# One compile of llama.cpp for both local servers, from the llama-cpp-python sdist's vendored source: the
# bindings' wheel (llama-cpp-python's server) and, in the same build tree, llama.cpp's own llama-server (only
# the server's own files compile after the wheel's: nothing of llama.cpp compiles twice). Writes what is
# missing: the wheel into $WHEELS, llama-server and its .so files into $DEST (the kit runs it with
# LD_LIBRARY_PATH set to that folder). Called by setup_local.sh and setup_llama_server.sh.
set -euo pipefail
: "${VENV:?}" "${WHEELS:?}" "${DEST:?}" "${VERSION:?}"
quiet() { grep -vE 'Location .* is ignored|^\s*$' || true; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/llama-cpp-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$VENV/bin/python" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$WORK" 2>&1 | quiet
tar -xzf "$(ls "$WORK"/llama*cpp*python-"$VERSION".tar.gz | head -1)" -C "$WORK"
SRC=$(ls -d "$WORK"/llama*cpp*python-"$VERSION" | head -1)
t0=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="${CMAKE_ARGS:--DGGML_BLAS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
  "$VENV/bin/python" -m pip wheel -q --no-deps "$SRC" -w "$WORK/wheel" -C build-dir="$WORK/build" 2>&1 | quiet
echo "build-llama-cpp: llama-cpp-python $VERSION built in $(( $(date +%s) - t0 )) s"
if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
  mkdir -p "$WHEELS" && cp "$WORK"/wheel/llama_cpp_python-*.whl "$WHEELS"/
fi
if LD_LIBRARY_PATH="$DEST" "$DEST/llama-server" --version >/dev/null 2>&1; then exit 0; fi  # built and runs
t1=$(date +%s)
if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then  # the ones pip's build used are gone with it
  "$VENV/bin/python" -m pip install -q --target "$WORK/cmake" cmake ninja 2>&1 | quiet
  export PATH="$WORK/cmake/bin:$PATH" PYTHONPATH="$WORK/cmake${PYTHONPATH:+:$PYTHONPATH}"
fi
# llama.cpp's tools/ (where the server lives) adds tools/mtmd itself: the bindings' own copy is switched off
log() { "$@" > "$WORK/step.log" 2>&1 || { tail -20 "$WORK/step.log" >&2; exit 1; }; }
log cmake -S "$SRC" -B "$WORK/build" -DCMAKE_MAKE_PROGRAM="$(command -v ninja)" -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON
log cmake --build "$WORK/build" --target llama-server -j "$(nproc)"
rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp"
cp "$WORK/build/bin/llama-server" "$DEST.tmp/"
find "$WORK/build/bin" -maxdepth 1 -name '*.so*' -exec cp -P {} "$DEST.tmp/" \;
rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
echo "build-llama-cpp: llama-server built in $(( $(date +%s) - t1 )) s more: $DEST/llama-server"
