#!/usr/bin/env bash
# The sandbox's escape tests a second time, as an ordinary user: CI runs as root, and a
# sandbox started by root and one started by an ordinary user differ (the user namespace,
# the process limit, Claude Code's own nested sandbox). Run as root, after scripts/setup.sh;
# extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "test-as-user: run as root (it makes the ordinary user, then runs the tests as it)" >&2
  exit 2
fi
USER_NAME=${EVAL_TEST_USER:-evals-user}
id "$USER_NAME" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$USER_NAME"
USER_HOME=$(getent passwd "$USER_NAME" | cut -d: -f6)
as_user() { runuser -u "$USER_NAME" -- env -i HOME="$USER_HOME" PATH=/usr/local/bin:/usr/bin:/bin \
  LANG=C.UTF-8 CI="${CI:-}" EVAL_CLAUDE_BIN="$PWD/.ci/claude/node_modules/.bin/claude" "$@"; }

# The checkout and the pinned CLIs must be readable by that user (a clone under /tmp is).
if ! as_user test -r "$PWD/pyproject.toml" -a -x "$PWD/.ci/claude/node_modules/.bin/claude"; then
  echo "test-as-user: $USER_NAME cannot read this checkout ($PWD) or its .ci/ binaries;" \
    "clone it where an ordinary user can (e.g. under /tmp)" >&2
  exit 1
fi
# Its own virtual environment, from the system's Python (root's may live in root's home),
# with this checkout's wheel and test dependencies.
dist=$(mktemp -d /tmp/evals-wheel-XXXXXX)
trap 'rm -rf "$dist"' EXIT
.venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$dist" . >/dev/null
chmod -R a+rX "$dist"
venv="$USER_HOME/evals-venv"
as_user /usr/bin/python3 -m venv --clear "$venv"
as_user "$venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
wheel=$(ls "$dist"/*.whl)
as_user "$venv/bin/python" -m pip install --quiet "$wheel[testing]" >/dev/null
# The sandbox's tests (one a line).
TESTS=(
  tests/unit/test_confine.py
  tests/e2e/test_escapes.py
  tests/e2e/test_tmpdir.py
  tests/e2e/test_shell_sandbox.py
  tests/e2e/test_mock_host_forgery.py
  tests/integration/test_mocks_host.py
  tests/e2e/test_reference_parity.py
  tests/integration/test_kept_files_inert.py
  tests/e2e/test_seccomp.py
  tests/e2e/test_relay_bounds.py
  tests/e2e/test_bounds_count.py
  tests/e2e/test_escapes_reach.py
)
as_user "$venv/bin/python" -m pytest -p no:cacheprovider -n auto "${TESTS[@]}" "$@"
