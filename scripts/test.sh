#!/usr/bin/env bash
# Run the project's tests on a fresh machine: set up, then pytest (extra arguments pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -x .ci/claude/node_modules/.bin/claude ]; then
  export EVAL_CLAUDE_BIN="$PWD/.ci/claude/node_modules/.bin/claude"
fi
# The suite runs on every CPU (pytest-xdist); pass -n 0 to run it in one process.
exec .venv/bin/python -m pytest -p no:cacheprovider -n auto --dist worksteal "$@"
