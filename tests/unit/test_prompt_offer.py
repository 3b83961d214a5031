"""What a prompt offers selected when it opens (``shell/screens/prompt_screen.py``): the whole
value (typing replaces it), or a path's file name without its extension (typing renames it,
the folder stays), as a browser's address bar and a save dialog do."""

from __future__ import annotations

from tui_app.shell.screens.prompt_screen import offered_selection


def test_a_value_is_offered_whole() -> None:
    assert offered_selection("1000", path=False) == (0, 4)
    assert offered_selection("", path=False) == (0, 0)


def test_a_path_offers_its_file_name_without_the_extension() -> None:
    path = "/home/ann/Downloads/tui-app-logs/mnist-all-20261207.log"
    start, end = offered_selection(path, path=True)
    assert path[start:end] == "mnist-all-20261207"
    assert offered_selection("config.yaml", path=True) == (0, 6)
    start, end = offered_selection("/tmp/folder.d/", path=True)
    assert (start, end) == (14, 14)  # a folder: nothing to rename, the cursor at its end
    start, end = offered_selection("/tmp/.hidden", path=True)
    assert "/tmp/.hidden"[start:end] == ".hidden"
