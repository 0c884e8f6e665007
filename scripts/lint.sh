#!/usr/bin/env bash
# Lint: ruff, then mypy --strict on the whole package and mypy on the tests (as tox -e lint).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m ruff check pytest_plugin_evals tests bench examples
"$PY" -m ruff format --check pytest_plugin_evals tests bench examples
"$PY" -m mypy --strict pytest_plugin_evals
"$PY" -m mypy tests
