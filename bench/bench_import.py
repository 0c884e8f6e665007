"""What having the plugin installed costs a pytest session that has no evals.

    python bench/bench_import.py [--repeat 20] [--python OTHER_PYTHON ...]

pytest imports the entry point (``pytest_plugin_evals.plugin``) in every session of an
environment the plugin is installed in. This prints, as medians of ``--repeat`` fresh
interpreters each (interleaved, so a change in the machine's load falls on every column alike):

* importing the entry point in an interpreter that has imported pytest (as pytest has when it
  loads its plugins), ms of wall and CPU time; and alone (pytest's own import included);
* ``pytest --co -q`` on an empty folder with the plugin and with ``-p no:evals``, ms of wall and
  CPU time, and their difference: the price of the plugin on every pytest run;
* the package's modules loaded by that session.

Each ``--python`` is another interpreter to measure beside this one (a checkout's venv: the
version before a change); nothing is asserted (docs/explanation/performance.md has the
figures, tests/architecture/test_start_up.py the modules that must not load).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Imports the entry point after pytest; prints its wall and CPU seconds, then the package's
#: modules a session without evals loaded.
IMPORT = """
import time, sys
{pre}
wall, cpu = time.perf_counter(), time.process_time()
import pytest_plugin_evals.plugin
print(time.perf_counter() - wall, time.process_time() - cpu)
"""

#: Byte code caches written, as an installed plugin has them (``PYTHONDONTWRITEBYTECODE`` would
#: have every module compiled in every run, the package's and pytest's rewritten ones); kept
#: under a folder of the bench's own (``PYTHONPYCACHEPREFIX``), not beside the sources.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

LOADED = """
import sys, pytest
pytest.main(["--co", "-q", "-p", "no:cacheprovider"])
print(" ".join(m for m in sys.modules if m.startswith("pytest_plugin_evals")))
"""


def import_seconds(python: str, *, with_pytest: bool) -> tuple[float, float]:
    """(wall, CPU) seconds of importing the entry point in a fresh interpreter."""
    code = IMPORT.format(pre="import pytest" if with_pytest else "")
    done = subprocess.run(
        [python, "-c", code], cwd=tempfile.gettempdir(), capture_output=True, text=True,
        check=True, env=ENV,
    )  # fmt: skip
    wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def session_seconds(python: str, root: Path, extra: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``pytest --co -q`` in ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
        cwd=root, capture_output=True, check=False, env=ENV,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 5):  # 5: no tests collected
        raise SystemExit(f"pytest failed:\n{done.stdout.decode()}{done.stderr.decode()}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def loaded_modules(python: str, root: Path) -> list[str]:
    done = subprocess.run(
        [python, "-c", LOADED], cwd=root, capture_output=True, text=True, check=True, env=ENV
    )
    return sorted(done.stdout.split("\n")[-2].split())


def _ms(runs: list[tuple[float, float]]) -> str:
    wall = statistics.median(w for w, _ in runs) * 1000
    cpu = statistics.median(c for _, c in runs) * 1000
    return f"{wall:7.1f} ms wall {cpu:7.1f} ms CPU"


def measure(pythons: list[str], repeat: int, root: Path) -> None:
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for python in pythons:  # fill the byte code caches
        import_seconds(python, with_pytest=False)
        session_seconds(python, root, [])
    for _ in range(repeat):
        for python in pythons:
            runs.setdefault((python, "import"), []).append(import_seconds(python, with_pytest=True))
            runs.setdefault((python, "alone"), []).append(import_seconds(python, with_pytest=False))
            runs.setdefault((python, "with"), []).append(session_seconds(python, root, []))
            runs.setdefault((python, "without"), []).append(
                session_seconds(python, root, ["-p", "no:evals"])
            )
    for python in pythons:
        print(f"{python}  (medians of {repeat})")
        print(f"  import, pytest loaded first  {_ms(runs[python, 'import'])}")
        print(f"  import alone (with pytest's) {_ms(runs[python, 'alone'])}")
        print(f"  pytest --co, the plugin      {_ms(runs[python, 'with'])}")
        print(f"  pytest --co, -p no:evals     {_ms(runs[python, 'without'])}")
        walls = [w for w, _ in runs[python, "with"]], [w for w, _ in runs[python, "without"]]
        cpus = [c for _, c in runs[python, "with"]], [c for _, c in runs[python, "without"]]
        wall = (statistics.median(walls[0]) - statistics.median(walls[1])) * 1000
        cpu = (statistics.median(cpus[0]) - statistics.median(cpus[1])) * 1000
        print(f"  the plugin costs a session   {wall:7.1f} ms wall {cpu:7.1f} ms CPU")
        loaded = loaded_modules(python, root)
        print(f"  the package's modules loaded ({len(loaded)}): {' '.join(loaded)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--python", action="append", default=[], help="another interpreter")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        (Path(tmp) / "project").mkdir()
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        measure([sys.executable, *args.python], args.repeat, Path(tmp) / "project")


if __name__ == "__main__":
    main()
