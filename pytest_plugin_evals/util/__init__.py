"""Helpers below every room, each written once: processes, JavaScript value and regex semantics,
frontmatter, timestamps, environments, images, plugin manifests and the ``claude`` lookup.

Nothing here imports a module of this package outside ``util``, and nothing here imports pytest.
"""
