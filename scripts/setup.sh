#!/usr/bin/env bash
# Set up a fresh machine for this project: a virtual environment with the package and its test
# dependencies, and the pinned Claude Code binary in a project-local folder.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
CLAUDE_CODE_VERSION=2.1.328

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[testing]"

if [ "${SKIP_CLAUDE_INSTALL:-}" != "1" ]; then
  if [ ! -x .ci/claude/node_modules/.bin/claude ] \
     || ! .ci/claude/node_modules/.bin/claude --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION"; then
    mkdir -p .ci/claude
    npm install --prefix .ci/claude --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
  fi
fi

# The other agent CLIs the end-to-end tests drive (pinned, one "package@version" per line), in
# a project-local folder too. Skipped with SKIP_CLAUDE_INSTALL=1 (the example needs none).
AGENT_CLIS=(
  "@github/copilot@1.0.102"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
  "@qwen-code/qwen-code@0.24.4"
)
if [ "${SKIP_CLAUDE_INSTALL:-}" != "1" ] && [ "${#AGENT_CLIS[@]}" -gt 0 ]; then
  mkdir -p .ci/agents
  npm install --prefix .ci/agents --no-audit --no-fund --loglevel=error "${AGENT_CLIS[@]}" >/dev/null
fi
