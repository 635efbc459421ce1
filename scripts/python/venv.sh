#!/usr/bin/env bash
# Makes the project's Python environment, .venv/ at the repository root (gitignored), from the pinned
# files beside this script, with the ehrgym package (editable, every extra), and .venv/wheelhouse/: the
# wheels of the package's own dependencies and build backend, for the offline fresh-install test
# (tests/test_install.py). Runs once per change of those files (a stamp holds their hash), so
# `npm test` pays for it on a fresh machine only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv"
req="$root/scripts/python/requirements-test.txt"
con="$root/scripts/python/constraints.txt"
pyproject="$root/scripts/python/pyproject.toml"
stamp="$(cat "$req" "$con" "$pyproject" | sha256sum | cut -c1-16)"
wheels="$venv/wheelhouse"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.ehrgym-stamp" 2>/dev/null)" = "$stamp" ] && [ "$(cat "$wheels/.stamp" 2>/dev/null)" = "$stamp" ]; then exit 0; fi
python="${EHRGYM_PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "ehrgym: Python >= 3.10 is needed for the Python tests (set EHRGYM_PYTHON to one)")'
echo "ehrgym: installing the Python test environment into .venv/ (once; a few minutes on a fresh machine)" >&2
start=$SECONDS
if ! [ -x "$venv/bin/python" ] || [ "$(cat "$venv/.ehrgym-stamp" 2>/dev/null)" != "$stamp" ]; then
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" -c "$con" \
    -e "$root/scripts/python[trl,verifiers,openenv,datasets]"
  echo "$stamp" > "$venv/.ehrgym-stamp"
fi
rm -rf "$wheels.tmp"
"$venv/bin/python" -m pip download -q --disable-pip-version-check --only-binary=:all: -c "$con" -d "$wheels.tmp" \
  "$root/scripts/python" setuptools
echo "$stamp" > "$wheels.tmp/.stamp"
rm -rf "$wheels" && mv "$wheels.tmp" "$wheels"
echo "ehrgym: .venv/ ready in $((SECONDS - start)) s" >&2
