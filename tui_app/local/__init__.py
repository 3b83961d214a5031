"""The local jobs service: the ml v1 Jobs API and Logging entries:list on 127.0.0.1.

Kept import-light on purpose: the replica supervisor (``tui_app.local.execution.supervisor``)
starts once per replica and must not pay for the HTTP server's imports.
"""
