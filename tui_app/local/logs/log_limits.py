"""The log store's limits that the service's flags set, with their defaults.

A module of constants only: ``tui-app``'s argument parser reads these defaults for the
``service`` flags' help on every start (the TUI's too), and must not import the log store's
query and retention code to do so.
"""

from __future__ import annotations

DEFAULT_RETENTION_DAYS = 30.0
"""``--log-retention-days``: Cloud Logging's own default retention (``log_retention``)."""
DEFAULT_MAX_BYTES = 20 << 30
"""``--log-max-gib``: 20 GiB, months of a busy machine's logs, far from filling a disk that
holds datasets (``log_retention``)."""
DEFAULT_SCAN_SECONDS = 1.0
"""``--log-scan-seconds``: how long one page over every job may read (``entries``) before it
answers with what it found and a token to go on from where it stopped."""
