"""Pure domain logic in rooms by concern: no IO, no Textual. Every other layer may import it.

``jobs`` is the floor and ``logs`` stands beside it; ``running`` and ``metrics`` sit on them,
``views`` on those, and ``filters``, ``builder``, ``vertex`` and ``notify`` on top. The import
contracts in pyproject.toml keep that order; docs/module-map.md draws it.
"""
