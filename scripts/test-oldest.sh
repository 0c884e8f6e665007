#!/usr/bin/env bash
# The unit tests under the oldest pytest and pytest-xdist that pyproject.toml allows (pytest 8.0,
# pytest-xdist 3.5: tox -e py311-pytestmin does the same), in a virtual environment of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
venv=.ci/oldest-venv
if [ ! -x "$venv/bin/python" ]; then
  "$PYTHON" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -e ".[testing]" "pytest==8.0.*" "pytest-xdist==3.5.*"
"$venv/bin/python" -m pytest --version
unset PYTHONDONTWRITEBYTECODE  # bytecode kept between sessions: see scripts/test.sh
if [ -x .ci/claude/node_modules/.bin/claude ]; then
  export EVAL_CLAUDE_BIN="$PWD/.ci/claude/node_modules/.bin/claude"
fi
exec "$venv/bin/python" -m pytest -p no:cacheprovider -n auto tests/unit tests/architecture \
  tests/integration/test_collection.py "$@"
