#!/usr/bin/env bash
# Run the project's tests on a fresh machine: set up, then pytest (extra arguments pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Python writes its bytecode (and pytest its rewritten test modules) even where the environment
# says not to: every session under test starts fresh interpreters that import the whole package,
# and compiling it again each time cost a fifth of the inner loop's CPU.
unset PYTHONDONTWRITEBYTECODE
if [ -x .ci/claude/node_modules/.bin/claude ]; then
  export EVAL_CLAUDE_BIN="$PWD/.ci/claude/node_modules/.bin/claude"
fi
# The suite runs on every CPU (pytest-xdist); pass -n 0 to run it in one process.
exec .venv/bin/python -m pytest -p no:cacheprovider -n auto --dist worksteal "$@"
