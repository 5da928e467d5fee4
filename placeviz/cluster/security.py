"""TLS for a cluster's connections (scheduler, tasks, clients), off unless turned on.

``pv.config.set_cluster_tls(True)`` (or ``PLACEVIZ_CLUSTER_TLS=1``, which task processes inherit)
makes every connection Dask's TLS, both ends authenticated. The certificates are Dask's own
configuration's (``distributed.comm.tls.*``) where it names them; otherwise placeviz makes a
certificate authority and one certificate signed by it, once per user of this machine, readable
by that user only: every placeviz process of the user can join the user's clusters, nobody else's.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path
from typing import Any

ENVIRONMENT = "PLACEVIZ_CLUSTER_TLS"
PLAIN_SCHEME = "tcp+asyncio"  # placeviz's comm (``asyncio_comm.py``), named in pyproject.toml
_VALID_DAYS = 365


def tls_enabled() -> bool:
    return os.environ.get(ENVIRONMENT, "").strip().lower() in ("1", "true", "yes", "on")


def scheme() -> str:
    """The scheme of the cluster's addresses: Dask's 'tls', or plain TCP over placeviz's
    asyncio comm ('tcp+asyncio', ``asyncio_comm.py``: Dask's own TCP comm takes ~70 us more
    per message)."""
    return "tls" if tls_enabled() else PLAIN_SCHEME


def security(tls: bool | None = None) -> Any:
    """Dask's ``Security`` for this process's cluster connections (``tls``: whether to use TLS,
    by default whether it is turned on), None without TLS."""
    if not (tls_enabled() if tls is None else tls):
        return None
    from distributed import Security

    configured = Security(require_encryption=True)
    if configured.tls_ca_file:
        return configured
    ca, cert, key = (str(path) for path in _own_certificates())
    files = {}
    for role in ("client", "scheduler", "worker"):  # one certificate: every end is the user's
        files[f"tls_{role}_cert"] = cert
        files[f"tls_{role}_key"] = key
    return Security(require_encryption=True, tls_ca_file=ca, **files)


def connection_args(address: str) -> dict[str, Any]:
    """What a one-off connection to ``address`` (an identity probe) needs: TLS's context for a
    'tls://' address, else nothing."""
    found = security(address.startswith("tls://"))
    return found.get_connection_args("client") if found is not None else {}


def _own_certificates() -> tuple[Path, Path, Path]:
    """(CA certificate, certificate, its key) of this user's clusters, made on first use."""
    from placeviz.cluster.rendezvous import locked, rendezvous_dir

    folder = rendezvous_dir().parent / "tls"
    folder.mkdir(mode=0o700, exist_ok=True)
    paths = (folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    with locked("tls-certificates"):  # tasks starting together make them once
        if not all(path.is_file() for path in paths):
            _write_certificates(*paths)
    return paths


def _write_certificates(ca_path: Path, cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    until = now + datetime.timedelta(days=_VALID_DAYS)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("placeviz cluster CA"))
        .issuer_name(name("placeviz cluster CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    loopback = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("placeviz cluster task"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName(loopback), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    for path, data in (
        (key_path, key_bytes),
        (cert_path, cert.public_bytes(serialization.Encoding.PEM)),
        (ca_path, ca.public_bytes(serialization.Encoding.PEM)),  # last: its presence says done
    ):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
