"""tui-app: a keyboard-driven terminal job manager for AI Platform Training (ml v1) jobs.

The package is layered one way only (docs/module-map.md): ``entry`` (the command line) -> ``shell``
(the Textual App and its screens) and widgets -> ``api`` (clients) -> HTTP -> ``local`` (the local
jobs service). ``model`` (pure domain logic) and ``config`` (settings, presets, paths) are shared
by all.
"""

__version__ = "0.1.0"
