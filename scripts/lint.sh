#!/usr/bin/env bash
# Lint: ruff, then mypy --strict on the core and mypy on the package and the tests (as tox -e lint).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m ruff check pytest_plugin_evals tests bench examples
"$PY" -m ruff format --check pytest_plugin_evals tests bench examples
core=(util model.py records.py suites sandbox.py recording.py judges graders mocks agents
      runner.py scoring.py shards.py reporting testing __main__.py decisions.py planning.py)
"$PY" -m mypy --strict "${core[@]/#/pytest_plugin_evals/}"
"$PY" -m mypy pytest_plugin_evals tests
