"""Builder presets on disk: names checked, files atomic, errors that say what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_app.config.locations import ENV_CONFIG_DIR
from tui_app.config.presets import (
    PresetError,
    delete_preset,
    list_presets,
    load_preset,
    preset_exists,
    preset_name_error,
    presets_dir,
    sample_trainer_dir,
    save_preset,
)

DATA = {
    "base_name": "mnist",
    "package_path": None,
    "job": {"labels": {"owner": "ann"}, "trainingInput": {"scaleTier": "BASIC"}},
}


def test_presets_live_in_the_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_CONFIG_DIR, str(tmp_path / "cfg"))
    assert presets_dir() == tmp_path / "cfg" / "presets"
    path = save_preset("gpu-cluster", DATA)
    assert path == tmp_path / "cfg" / "presets" / "gpu-cluster.yaml"
    assert list_presets() == ["gpu-cluster"]


def test_save_load_round_trip_and_replace(tmp_path: Path) -> None:
    save_preset("mnist", DATA, tmp_path)
    assert load_preset("mnist", tmp_path) == DATA
    assert preset_exists("mnist", tmp_path)
    changed = {**DATA, "base_name": "mnist_v2"}
    save_preset("mnist", changed, tmp_path)
    assert load_preset("mnist", tmp_path) == changed
    assert [p.name for p in tmp_path.iterdir()] == ["mnist.yaml"]  # no temporary files left


def test_list_is_sorted_and_skips_strangers(tmp_path: Path) -> None:
    assert list_presets(tmp_path / "missing") == []
    for name in ("b", "A", "c.v2"):
        save_preset(name, DATA, tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".hidden.yaml").write_text("{}")
    assert list_presets(tmp_path) == ["A", "b", "c.v2"]


def test_delete(tmp_path: Path) -> None:
    save_preset("old", DATA, tmp_path)
    delete_preset("old", tmp_path)
    assert list_presets(tmp_path) == []
    with pytest.raises(PresetError, match="no preset called 'old'"):
        delete_preset("old", tmp_path)


@pytest.mark.parametrize(
    "name", ["", "../x", "a/b", ".hidden", "x" * 65, "with space", "trailing.", "a..b", "-x"]
)
def test_bad_names_are_refused_before_touching_disk(name: str, tmp_path: Path) -> None:
    assert preset_name_error(name)
    with pytest.raises(PresetError):
        save_preset(name, DATA, tmp_path)
    with pytest.raises(PresetError):
        load_preset(name, tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["a", "mnist-gpu", "cluster_4.v2", "X" * 64])
def test_good_names(name: str) -> None:
    assert preset_name_error(name) is None


def test_broken_files_say_so(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("job: [unclosed\n")
    with pytest.raises(PresetError, match="not valid YAML"):
        load_preset("bad", tmp_path)
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(PresetError, match="does not hold a mapping"):
        load_preset("list", tmp_path)
    with pytest.raises(PresetError, match="no preset called 'nope'"):
        load_preset("nope", tmp_path)


def test_the_sample_trainer_is_found_in_a_checkout_and_none_when_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The built-in presets and the demo run the sample trainer: in a checkout it is
    examples/trainer (a wheel carries it as tui_app/sample_trainer); an install without it
    gets None, and the builder says what to fill instead."""
    import tui_app.config.presets as presets

    found = sample_trainer_dir()
    assert found is not None and (found / "setup.py").is_file()
    assert found == Path(__file__).resolve().parents[2] / "examples" / "trainer"
    empty = tmp_path / "sample_trainer"
    empty.mkdir()  # a folder without setup.py is no package
    monkeypatch.setattr(presets, "SAMPLE_TRAINER_DIRS", (empty, tmp_path / "missing"))
    assert sample_trainer_dir() is None
