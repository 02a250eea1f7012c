"""A throwaway certificate authority for the TLS tests, made with the ``openssl`` command.

``make_pki(directory)`` writes a CA, a broker certificate it signed (for DNS:localhost and
IP:127.0.0.1), a client certificate it signed (for mutual TLS; its key also encrypted with
``KEY_PASSWORD``), and a second CA with a broker certificate of its own, which a client trusting
the first CA must refuse. EC P-256 keys, valid for two days.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

KEY_PASSWORD = "key-password-7f3a"


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    client_key_encrypted: Path
    client_bundle: Path  # the client's key and certificate in one PEM file
    other_ca: Path
    other_server_cert: Path
    other_server_key: Path


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    assert openssl is not None
    subprocess.run([openssl, *args], check=True, capture_output=True, timeout=30)


_NEW_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    _openssl(
        "req", "-x509", *_NEW_KEY, "-days", "2", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", str(key), "-out", str(cert),
    )  # fmt: skip
    return cert, key


def _signed(
    directory: Path, name: str, ca: tuple[Path, Path], extensions: str
) -> tuple[Path, Path]:
    cert, key, request = (directory / f"{name}{suffix}" for suffix in (".pem", ".key", ".csr"))
    ext = directory / f"{name}.ext"
    ext.write_text(extensions + "\n")
    _openssl("req", *_NEW_KEY, "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(request))
    _openssl(
        "x509", "-req", "-in", str(request), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
        "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(cert),
    )  # fmt: skip
    return cert, key


def make_pki(directory: Path) -> Pki:
    ca = _ca(directory, "kafkawire-test-ca")
    server = _signed(directory, "localhost", ca, "subjectAltName=DNS:localhost,IP:127.0.0.1")
    client = _signed(directory, "client", ca, "extendedKeyUsage=clientAuth")
    encrypted = directory / "client-encrypted.key"
    _openssl(
        "pkey", "-in", str(client[1]), "-aes256", "-passout", f"pass:{KEY_PASSWORD}",
        "-out", str(encrypted),
    )  # fmt: skip
    bundle = directory / "client-bundle.pem"
    bundle.write_text(client[1].read_text() + client[0].read_text())
    other_ca = _ca(directory, "another-ca")
    other = _signed(directory, "other-localhost", other_ca, "subjectAltName=IP:127.0.0.1")
    return Pki(
        ca=ca[0],
        server_cert=server[0],
        server_key=server[1],
        client_cert=client[0],
        client_key=client[1],
        client_key_encrypted=encrypted,
        client_bundle=bundle,
        other_ca=other_ca[0],
        other_server_cert=other[0],
        other_server_key=other[1],
    )
