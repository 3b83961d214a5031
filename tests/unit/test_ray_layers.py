"""A job's installed packages on their way to a node that does not share the service's disk:
packed, unpacked once per content, compared without shipping when the node sees the folder."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from tui_app.local.execution.ray_replica import folder_probe, pack_layer, unpack_layer


def test_a_layer_unpacks_on_a_node_as_it_was_packed(tmp_path: Path) -> None:
    layer = tmp_path / "service" / "layer"
    (layer / "trainer").mkdir(parents=True)
    (layer / "trainer" / "task.py").write_text("print('hi')\n")
    (layer / "trainer-0.1.dist-info").mkdir()
    digest, data = pack_layer(layer)
    node = tmp_path / "node"
    first = unpack_layer(node, digest, data)
    assert (first / "trainer" / "task.py").read_text() == "print('hi')\n"
    assert folder_probe(first) == folder_probe(layer) != ""
    (first / "marker").write_text("kept")
    assert unpack_layer(node, digest, data) == first  # once per content: the copy is reused
    assert (first / "marker").exists()


def test_the_probe_tells_a_different_folder_apart(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("")
    (b / "y").write_text("")
    assert folder_probe(a) != folder_probe(b)
    assert folder_probe(tmp_path / "missing") == ""


def test_an_archive_with_a_link_out_of_the_node_folder_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        link = tarfile.TarInfo("./evil")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tar.addfile(link)
    with pytest.raises(tarfile.TarError):
        unpack_layer(tmp_path / "node", "d" * 64, buf.getvalue())
    assert not (tmp_path / "node" / "layers" / ("d" * 64)).exists()
