"""Replicas' log lines: read from their files, written to SQLite, queried as Cloud Logging does.

One room because a log line's whole path is here: ``log_ingest`` turns a replica's bytes into
lines, ``log_writer`` is their single writer, ``log_query`` compiles an ``entries:list`` filter
into SQL and ``entries`` answers the request. It knows nothing of how replicas run: the runners
hand it files to read.
"""
