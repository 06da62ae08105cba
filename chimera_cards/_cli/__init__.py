"""The ``chimera-cards`` command: a thin click skin over the Python API.

``main`` is assembled on first use (``cli/app.py``), so importing a helper from this package —
``cli.common``, as ``reference-loop`` does — does not load every command and its dependencies.
"""
