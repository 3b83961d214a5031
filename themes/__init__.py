"""Themes for the TUI (dark, light, high contrast): Textual Theme objects and their registration."""
