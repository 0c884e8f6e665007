#!/usr/bin/env bash
# The main job, offline on a fresh machine: set up, then evaluate the example plugin by replaying
# its recorded Claude Code runs with the current graders (no agent is started, no network used).
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP_CLAUDE_INSTALL=1 bash scripts/setup.sh
exec .venv/bin/python -m pytest examples/release-helper -p no:cacheprovider \
  --eval-agent replay:examples/release-helper/recorded "$@"
