"""The App's screens: ``<name>_screen.py`` holds ``<Name>Screen``; ``builder_form_widget`` is
the builder's form.

The suffix keeps each module name unique in the product (``model/views/describe.py`` holds the
rules, ``describe_screen.py`` the screen that shows them), so a name in a traceback or an editor tab
says which one. Their layout lives in ``tui_app/shell/screens.tcss`` (the job list's in
``app.tcss``, read before the first frame).
"""
