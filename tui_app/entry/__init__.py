"""The ways in: the ``tui-app`` command line, ``tui-app jobs ...``, opening the TUI, ``--demo``.

Nothing in the product imports these modules (import-linter holds it): they sit on top and
assemble the rest, so the shell, the clients and the service stay usable without argparse.
"""
