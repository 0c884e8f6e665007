"""Reports of an eval session: the typed result, the JSON document, the terminal, the HTML page.

All of them work from the :class:`~pytest_plugin_evals.reporting.document.SessionResult` the
controller builds from the items' records, so they are the same with and without pytest-xdist.
Each submodule is imported where it is needed (the HTML report loads Jinja2).
"""
