"""``python -m pytest_plugin_evals init``: scaffolding a plugin's first eval cases.

``files`` (where and how ``init`` writes, the reference's blank case), ``inventory`` (what it
reads of the plugin), ``settings`` (which judge drafts), ``draft`` (the judge's request and its
reply checked), ``cases`` (drafts as case folders and ``trigger_eval.json``), ``pilot`` (each
case run once through pytest) and ``command`` (the steps in order, and what is printed).
"""
