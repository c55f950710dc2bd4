#!/usr/bin/env bash
# The browser test drives Debian's chromium with playwright (no browser download).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "browser test: installing Debian chromium (one time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null
else
  echo "browser test: chromium not found; install it (sudo apt-get install chromium) or set CHROMIUM=/path" >&2
  exit 1
fi
