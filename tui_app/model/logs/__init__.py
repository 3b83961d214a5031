"""Replicas' log lines: text cleaning, the log view's line store, severities, records,
tracebacks, a failed job's cause, and when a following pane jumps to the newest line.
"""
