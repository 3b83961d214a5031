"""Nothing on the start path that the list's first frame does not need (issue 45).

A fresh process takes the real way in (``tui_app.entry.cli``, ``entry.launch.connector``),
runs ``JobsApp`` headless and reads ``sys.modules`` in the first frame it paints: the Google
client stack (loaded by the poll's first call, after that frame), the other screens (loaded when
first opened) and pydantic (the builder's and the detail's rules) must not be there yet. Only a
fresh process can prove an import did not happen.
"""

from __future__ import annotations

import textwrap

from tests.support.fresh_process import json_of_child

HEAVY = (
    "googleapiclient",
    "google.auth",
    "google.oauth2",
    "httplib2",
    "google_auth_httplib2",
    "google.cloud.logging",
    "pydantic",
    "tui_app.api.connection",
    "tui_app.api.jobs_client",
    "tui_app.local.service_cli",
    "tui_app.local.execution",
    "psutil",
)
"""Modules (and their submodules) the first frame must not wait for."""
LIST_SCREEN = "tui_app.shell.screens.jobs_screen"

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys

    import tui_app.entry.cli  # the console script's module: what `tui-app` imports first
    tui_app.entry.cli.build_parser(commands=False)  # as main() builds it for the TUI
    from tui_app.config.settings import Profile, Settings
    from tui_app.entry.launch import connector
    from tui_app.shell.app import JobsApp

    # A URL profile on a port nothing listens on: the poll's first call builds the real
    # client (credentials, googleapiclient) and fails without starting anything.
    profile = Profile(name="nowhere", kind="url", endpoint="http://127.0.0.1:9")
    app = JobsApp(Settings(), connector(profile, None), "p", profile.name)
    seen = {}
    display = JobsApp._display

    def first_frame(self, screen, renderable):
        display(self, screen, renderable)
        seen.setdefault("modules", sorted(sys.modules))

    JobsApp._display = first_frame

    async def run():
        async with app.run_test(size=(120, 40)):
            for _ in range(2000):
                if seen:
                    break
                await asyncio.sleep(0.005)
            app.refresh_now()

    asyncio.run(run())
    print(json.dumps(seen.get("modules")))
    """
)


def _modules_at_first_frame() -> list[str]:
    modules = json_of_child(CHILD)
    assert modules, "no frame was painted"
    return list(modules)


def test_the_first_frame_waits_for_no_client_stack_and_no_other_screen() -> None:
    modules = _modules_at_first_frame()
    assert LIST_SCREEN in modules  # the frame is the list's
    below = tuple(name + "." for name in HEAVY)
    heavy = sorted(m for m in modules if m in HEAVY or m.startswith(below))
    screens = sorted(
        m for m in modules if m.startswith("tui_app.shell.screens.") and m != LIST_SCREEN
    )
    assert not heavy, f"imported before the first frame: {heavy}"
    assert not screens, f"screens imported before the first frame: {screens}"
