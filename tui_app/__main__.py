"""``python -m tui_app`` is ``tui-app``."""

from tui_app.entry.cli import main

raise SystemExit(main())
