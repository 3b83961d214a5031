"""The keymap check: unknown ids and remaps that clash on one screen are refused by name."""

from __future__ import annotations

from tui_app.config.keymap import keymap_problems

SCOPES = {
    "the job list": [
        ("jobs.cancel", "x,ctrl+d"),
        ("jobs.logs", "l"),
        ("table.up", "up,k"),
        ("app.quit", "q"),
    ],
    "the logs": [("logs.search", "slash"), ("view.up", "up,k"), ("app.quit", "q")],
}


def test_readmes_example_is_refused_naming_both_bindings() -> None:
    (problem,) = keymap_problems(SCOPES, {"jobs.cancel": "k"})
    assert problem.binding_id == "jobs.cancel"
    assert "k is already table.up's key on the job list" in problem.message
    assert "remap table.up too" in problem.message


def test_a_free_key_and_a_swap_are_fine() -> None:
    assert keymap_problems(SCOPES, {"jobs.cancel": "c"}) == []
    # Both remapped so they no longer meet: k cancels, c moves up.
    assert keymap_problems(SCOPES, {"jobs.cancel": "k", "table.up": "up,c"}) == []
    # A key another screen uses is no clash: logs' search on l.
    assert keymap_problems(SCOPES, {"logs.search": "l"}) == []


def test_unknown_ids_and_empty_keys() -> None:
    problems = keymap_problems(SCOPES, {"cancel-job": "x", "jobs.logs": " , "})
    assert [p.binding_id for p in problems] == ["cancel-job", "jobs.logs"]
    assert "no binding has the id 'cancel-job'" in problems[0].message
    assert "given no key" in problems[1].message


def test_clash_with_a_binding_shared_by_every_screen() -> None:
    (problem,) = keymap_problems(SCOPES, {"logs.search": "q"})
    assert "q is already app.quit's key on the logs" in problem.message
