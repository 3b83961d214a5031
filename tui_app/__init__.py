"""tui-app: a keyboard-driven terminal job manager for AI Platform Training (ml v1) jobs.

The package is layered one way only: screens and widgets -> ``tui_app.api`` (clients) -> HTTP ->
``tui_app.local`` (the local jobs service). ``tui_app.model`` is pure domain logic shared by all.
"""

__version__ = "0.1.0"
