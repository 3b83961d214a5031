"""Clients of the ml v1 Jobs API and Cloud Logging, for the local service and the cloud alike.

No Textual here: the TUI calls these from thread workers, the CLI calls them directly.
"""
