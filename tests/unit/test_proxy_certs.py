"""The storage proxy's certificates: private keys, reuse, and trust only for Google's names."""

from __future__ import annotations

import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
from cryptography import x509

from tui_app.local.storage.proxy_certs import PROXIED_HOSTS, ensure_certs


def test_files_are_made_private_and_reused(tmp_path: Path) -> None:
    folder = tmp_path / "tls"
    certs = ensure_certs(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "ca-key.pem").stat().st_mode) == 0o600
    assert stat.S_IMODE(certs.leaf_key.stat().st_mode) == 0o600
    ca, leaf = certs.ca_cert.read_bytes(), certs.leaf_cert.read_bytes()
    again = ensure_certs(folder)
    assert again.ca_cert.read_bytes() == ca and again.leaf_cert.read_bytes() == leaf
    # The bundle keeps the public roots beside the CA: other hosts still verify.
    bundle = certs.bundle.read_text()
    assert bundle.startswith(ca.decode()) and bundle.count("BEGIN CERTIFICATE") > 50


def test_a_damaged_key_is_replaced(tmp_path: Path) -> None:
    certs = ensure_certs(tmp_path)
    (tmp_path / "ca-key.pem").write_text("not a key")
    fresh = ensure_certs(tmp_path)
    assert fresh.ca_cert.read_bytes() != b"" and (tmp_path / "ca-key.pem").read_text() != (
        "not a key"
    )
    assert x509.load_pem_x509_certificate(certs.leaf_cert.read_bytes()).issuer == (
        x509.load_pem_x509_certificate(fresh.ca_cert.read_bytes()).subject
    )


def test_the_ca_can_only_vouch_for_googleapis(tmp_path: Path) -> None:
    ca = x509.load_pem_x509_certificate(ensure_certs(tmp_path).ca_cert.read_bytes())
    constraints = ca.extensions.get_extension_for_class(x509.NameConstraints)
    assert constraints.critical
    assert constraints.value.permitted_subtrees == [x509.DNSName("googleapis.com")]


def _handshake(certs_dir: Path, server_name: str) -> None:
    certs = ensure_certs(certs_dir)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(certs.leaf_cert, certs.leaf_key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except (ssl.SSLError, OSError):
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client_ctx = ssl.create_default_context(cafile=str(certs.bundle))
    try:
        with (
            socket.create_connection(("127.0.0.1", port)) as raw,
            client_ctx.wrap_socket(raw, server_hostname=server_name) as tls,
        ):
            tls.sendall(b"x")
    finally:
        thread.join(5)
        listener.close()


@pytest.mark.parametrize("host", PROXIED_HOSTS)
def test_a_client_trusting_the_bundle_accepts_the_proxy_for_google(
    tmp_path: Path, host: str
) -> None:
    _handshake(tmp_path, host)


def test_and_for_no_other_name(tmp_path: Path) -> None:
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(tmp_path, "pypi.org")
