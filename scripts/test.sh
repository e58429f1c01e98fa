#!/usr/bin/env bash
# Install everything the tests need into .venv, then run ruff, pyright and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; PNG/PDF export tests will skip" >&2
fi
# The sandbox's seccomp layer loads libseccomp (Debian: libseccomp2, normally present).
if ! ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libseccomp2 >/dev/null) \
    || echo "warning: could not install libseccomp2; the sandbox runs without seccomp" >&2
fi
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/pyright
.venv/bin/pytest "$@"
