#!/usr/bin/env bash
# The package is ready to publish: the wheel and the sdist build without a warning, `twine check
# --strict` passes, an editable install warns of nothing, and the wheel, installed into a fresh
# virtual environment, evaluates the example plugin (by replay: offline).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "package check: $*" >&2; exit 1; }

"$PYTHON" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --upgrade pip build twine
# Byte-compiling is the environment's choice, not the package's: its notices are not warnings.
env -u PYTHONDONTWRITEBYTECODE "$work/tools/bin/python" -m build --outdir "$work/dist" . \
  >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the build failed"; }
if grep -iE "warning" "$work/build.log" | grep -v "WARNING: Location"; then
  fail "the build printed the warnings above"
fi
"$work/tools/bin/python" -m twine check --strict "$work"/dist/*

"$PYTHON" -m venv "$work/edit"
"$work/edit/bin/python" -m pip install --quiet --upgrade pip
"$work/edit/bin/python" -m pip install --no-deps -e . >"$work/edit.log" 2>&1 \
  || { cat "$work/edit.log"; fail "the editable install failed"; }
if grep -iE "BuildBackendWarning|SetuptoolsDeprecationWarning" "$work/edit.log"; then
  fail "the editable install printed the warnings above"
fi

"$PYTHON" -m venv "$work/wheel"
"$work/wheel/bin/python" -m pip install --quiet "$work"/dist/*.whl
cp -r examples/release-helper "$work/example"
(
  cd "$work/example"
  "$work/wheel/bin/python" -m pytest -p no:cacheprovider . --eval-agent replay:recorded -q
) || fail "the installed wheel did not evaluate the example plugin"
echo "package check: wheel and sdist built without warnings, twine check passed, the wheel ran the example"
