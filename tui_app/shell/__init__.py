"""The Textual app: the App, its screens, the job actions and job source they share.

Nothing is imported here: ``tui_app.shell.jobs_source`` or ``tui_app.shell.package_build`` can be
loaded without Textual's App and every screen coming along.
"""
