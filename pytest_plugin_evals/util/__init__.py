"""Helpers below every room, each written once: processes, JavaScript value and regex semantics,
frontmatter, timestamps, environments, images, plugin manifests and the ``claude`` lookup.

Nothing here imports another module of this package, and nothing here imports pytest.
"""
