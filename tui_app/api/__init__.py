"""Clients of the ml v1 Jobs API and Cloud Logging: the same code for the local service and the cloud.

No Textual here: the TUI calls these from thread workers, the CLI calls them directly.
"""
