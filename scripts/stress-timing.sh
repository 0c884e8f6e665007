#!/usr/bin/env bash
# The interruption and timing tests, N times in a row (default 20), on a machine kept busy by
# four CPU-bound processes: they must never fail. Extra arguments pass to pytest.
#   bash scripts/stress-timing.sh            # 20 rounds
#   ROUNDS=5 bash scripts/stress-timing.sh -k sigterm
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-20}
PY=${PY:-.venv/bin/python}
# As scripts/test.sh: the sessions under test start fresh interpreters; let them keep bytecode.
unset PYTHONDONTWRITEBYTECODE
if [ -x .ci/claude/node_modules/.bin/claude ]; then
  export EVAL_CLAUDE_BIN="$PWD/.ci/claude/node_modules/.bin/claude"
fi
TESTS=(
  tests/integration/test_interruptions.py
  tests/integration/test_rate_limit_retries.py
  tests/integration/test_one_session_per_folder.py
  tests/integration/test_bounded_grading.py
  tests/integration/test_run_ahead.py
  tests/unit/test_rate_limiter.py
  tests/unit/test_grader_time_limit.py
  tests/unit/test_stops.py
  tests/integration/test_agents.py::test_timeout_kills_the_process_group
  tests/integration/test_sequential_runs.py::test_a_cmd_agent_runs_ahead_up_to_the_next_look
)
busy=()
for _ in 1 2 3 4; do
  "$PY" -c "while True: pass" &
  busy+=("$!")
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
for round in $(seq 1 "$ROUNDS"); do
  echo "stress: round $round of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
  "$PY" -m pytest -p no:cacheprovider -n 2 -q "${TESTS[@]}" "$@" >"${TMPDIR:-/tmp}/stress-timing.log" 2>&1
  status=$?
  if [ "$status" -ne 0 ]; then
    tail -40 "${TMPDIR:-/tmp}/stress-timing.log"
    echo "stress: round $round failed (pytest exit $status)" >&2
    exit 1
  fi
done
echo "stress: $ROUNDS rounds in a row passed under four busy processes"
