"""``python -m tui_app`` is ``tui-app``."""

from tui_app.cli import main

raise SystemExit(main())
