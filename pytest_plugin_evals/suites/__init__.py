"""Suite loaders: every format becomes :class:`~pytest_plugin_evals.model.Case` objects.

- :mod:`.discover` finds case dirs and suite files under an evals folder;
- :mod:`.directory` loads a case dir (prompt.md, case.yaml, graders/*.md);
- :mod:`.suite_file` loads a JSON/YAML suite (evals.json cases have ``prompt``, sy cases
  have ``input``);
- :mod:`.package_json` loads ``ai.evals`` of a package.json;
- :mod:`.manifest` finds the plugin a case evaluates;
- :mod:`.baseline` resolves ``--eval-baseline-plugin``'s plugin (a folder, or a commit's tree).

Nothing here imports pytest or starts a process but git (for :mod:`.baseline`, through
:mod:`pytest_plugin_evals.util.process`); this package's ``__init__`` imports nothing, so
finding suites (:mod:`.discover`) loads no parser.
"""
