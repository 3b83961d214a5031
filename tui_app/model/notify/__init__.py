"""Telling a user a job ended: ``jobs wait``'s exit status and lines, the terminal's bell and
desktop notification bytes, durations such as ``1h30m``.
"""
