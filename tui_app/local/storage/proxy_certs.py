"""The certificates that let a replica's TensorFlow talk TLS to the local storage proxy.

TensorFlow's GCS filesystem only ever dials ``https://www.googleapis.com`` and
``https://storage.googleapis.com``; the storage proxy (``gcs_proxy``) answers for those two names,
so it needs a certificate the replica trusts. The service makes its own certificate authority,
once per state dir, and hands replicas a CA bundle (``CURL_CA_BUNDLE``) that holds it beside the
usual public roots (certifi's), so every other host still verifies as before.

Blast radius, kept small on purpose:

- the CA carries a name constraint: it can only vouch for ``googleapis.com`` names, so its key
  (``ca-key.pem``, mode 0600, in a 0700 folder) cannot be used to impersonate any other site;
- only replicas are given the bundle; nothing is added to the system's trust store;
- leaf certificates are short-lived (a year) and renewed at service start when near expiry.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

import certifi
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PROXIED_HOSTS: tuple[str, ...] = ("www.googleapis.com", "storage.googleapis.com")
"""The names TensorFlow's GCS filesystem uses: its JSON API and its media (download) host."""

CA_NAME = "tui-app local storage CA"
PERMITTED_DOMAIN = "googleapis.com"
LEAF_DAYS = 365
CA_DAYS = 3650
RENEW_BEFORE = dt.timedelta(days=30)


@dataclass(frozen=True)
class ProxyCerts:
    """Where the proxy's certificate and the replicas' bundle are."""

    folder: Path
    ca_cert: Path
    leaf_cert: Path
    leaf_key: Path
    bundle: Path


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Atomic and private from the first byte: a half-written key is never read."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _key_usage(authority: bool) -> x509.KeyUsage:
    """A CA signs certificates and CRLs; a TLS server's ECDSA key only signs handshakes."""
    return x509.KeyUsage(
        digital_signature=not authority,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=authority,
        crl_sign=authority,
        encipher_only=False,
        decipher_only=False,
    )


def _new_ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            _key_usage(authority=True),
            critical=True,
        )
        .add_extension(
            x509.NameConstraints(
                permitted_subtrees=[x509.DNSName(PERMITTED_DOMAIN)], excluded_subtrees=None
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _new_leaf(
    ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PROXIED_HOSTS[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(h) for h in PROXIED_HOSTS]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            _key_usage(authority=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _load_ca(folder: Path) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None:
    try:
        key = serialization.load_pem_private_key((folder / "ca-key.pem").read_bytes(), None)
        cert = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if cert.not_valid_after_utc - RENEW_BEFORE < _now():
        return None
    return key, cert


def _leaf_fresh(path: Path, ca_cert: x509.Certificate) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return False
    return cert.issuer == ca_cert.subject and cert.not_valid_after_utc - RENEW_BEFORE > _now()


def ensure_certs(folder: Path) -> ProxyCerts:
    """The CA, the proxy's leaf and the replicas' bundle under ``folder``: reused while valid,
    made anew when missing, unreadable or near expiry. The bundle is rewritten every time, so it
    follows the certifi release the service runs with."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    certs = ProxyCerts(
        folder,
        folder / "ca.pem",
        folder / "proxy.pem",
        folder / "proxy-key.pem",
        folder / "ca-bundle.pem",
    )
    loaded = _load_ca(folder)
    if loaded is None:
        ca_key, ca_cert = _new_ca()
        _write(folder / "ca-key.pem", _pem_key(ca_key), 0o600)
        _write(certs.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    else:
        ca_key, ca_cert = loaded
    if loaded is None or not _leaf_fresh(certs.leaf_cert, ca_cert) or not certs.leaf_key.exists():
        key, cert = _new_leaf(ca_key, ca_cert)
        _write(certs.leaf_key, _pem_key(key), 0o600)
        _write(certs.leaf_cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    public = Path(certifi.where()).read_bytes()
    own = ca_cert.public_bytes(serialization.Encoding.PEM)
    _write(certs.bundle, own + b"\n" + public, 0o644)
    return certs
