"""What the terminal gets first: the list's rows and the header's counts in one frame.

The list mounts inside the batch Textual holds while the app starts, and Textual drops a
frame made during a batch yet counts it as shown: the next frame held only the lines that
changed since, without the header, whose counts came a frame later. ``JobsApp._end_batch``
repaints the whole screen as the batch ends. A headless app writes nothing, so this one runs
on a driver that takes every frame as a terminal would and keeps it.
"""

from __future__ import annotations

from typing import Any, cast

from textual.drivers.headless_driver import HeadlessDriver

from tests.pilot.conftest import wait_for
from tests.support.first_frames import app_on
from tests.support.fixed_jobs import JOBS, FixedSource
from tui_app.model.jobs.states import STATE_SYMBOL, JobState
from tui_app.shell.first_list import FirstList


class KeepingDriver(HeadlessDriver):
    """No terminal, but not headless to the app: it writes its frames, and they are kept."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: list[str] = []

    @property
    def is_headless(self) -> bool:
        return False

    def write(self, data: str) -> None:
        self.written.append(data)


async def test_the_first_frame_with_rows_has_the_header_counts() -> None:
    source = FixedSource()
    first = FirstList.start(source)
    first.result()  # in before the app starts: its rows go into the first frame
    app = app_on(source, first)
    app.driver_class = KeepingDriver
    a_job = str(JOBS[0]["jobId"])
    succeeded = sum(1 for job in JOBS if job["state"] == "SUCCEEDED")
    counts = f"{STATE_SYMBOL[JobState.SUCCEEDED]}{succeeded}"  # words may not fit: ✓2
    async with app.run_test(headless=False, size=(120, 35)) as pilot:

        def frames() -> list[str]:
            return cast(KeepingDriver, app._driver).written

        await wait_for(pilot, lambda: any(a_job in frame for frame in frames()))
        first_with_rows = next(frame for frame in frames() if a_job in frame)
        assert counts in first_with_rows, "the header's counts came in a later frame"
        assert "\x1b[1;1H" in first_with_rows  # the header's line is written with the rows
