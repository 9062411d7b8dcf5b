"""Per-session TLS credentials: every cluster the kit starts talks TLS with a certificate of its own.

:func:`create` makes a self-signed key and certificate for one session, as distributed's ``Security.temporary()``
does but with an ECDSA P-256 key instead of RSA-2048: made in well under a millisecond instead of ~45 ms (up to
~100 ms) of prime search at every start, and each TLS handshake between scheduler, workers and client signs faster.
The session's own scheduler, workers and client use them in memory (a file deleted while the session runs changes
nothing for it); a copy goes to ``tls-<session id>/`` in the user's registry folder (folder 0700, files 0600), so
that the same account's other processes (a script with ``--scheduler-file``, ``gpu-dask-kit sessions``, the
sidebar's shutdown) can connect, and no other account can read them. :func:`for_address` finds the credentials of
the session whose scheduler has an address; :func:`exposure` says who could connect to a cluster started with
``security=False``.
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path
from typing import Any

from . import registry
from .errors import ConnectError

__all__ = ["create", "file_security", "load", "for_address", "for_record", "tls_session", "remove", "folder", "exposure", "other_accounts", "CERT", "KEY"]

CERT, KEY = "cert.pem", "key.pem"
_NO_LOGIN = ("nologin", "false", "sync", "halt", "shutdown")


def folder(session_id: str) -> Path:
    """Where a session's credentials live: ``tls-<id>`` in the registry folder."""
    return registry.credentials_dir(session_id)


def create(session_id: str) -> Any:
    """New credentials for ``session_id``: written to :func:`folder` (0700 / 0600), returned in memory as a
    ``distributed.security.Security`` with ``require_encryption=True`` (plain TCP is refused)."""
    cert, key = _self_signed()
    path = folder(session_id)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    for name, text in ((CERT, cert), (KEY, key)):
        fd = os.open(path / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
    return _every_role(cert, key)


def _every_role(cert: str, key: str) -> Any:
    """One certificate and key (PEM text or file paths) for the client, scheduler and worker roles, TLS required."""
    from distributed.security import Security  # distributed: imported when a cluster starts

    roles = {f"tls_{role}_{part}": value for role in ("client", "scheduler", "worker") for part, value in (("cert", cert), ("key", key))}
    return Security(require_encryption=True, tls_ca_file=cert, **roles)


def _self_signed(days: int = 365) -> tuple[str, str]:
    """A self-signed certificate and its key (PEM), named "dask-internal" as ``Security.temporary()`` names its own."""
    import datetime

    from cryptography import x509  # a dependency (TLS by default); imported when a cluster starts, as distributed does
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dask-internal")])
    now = datetime.datetime.now(tz=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("dask-internal")]), critical=False)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem


def file_security(session_id: str) -> Any:
    """The session's credentials as file paths (what dask-jobqueue writes into a job script)."""
    cert, key = str(folder(session_id) / CERT), str(folder(session_id) / KEY)
    return _every_role(cert, key)


def load(session_id: str, address: str) -> Any:
    """The client credentials of ``session_id`` read from its folder; :class:`ConnectError` saying what to
    do when they are missing or unreadable."""
    from distributed.security import Security

    path = folder(session_id)
    try:
        cert, key = (path / CERT).read_text(), (path / KEY).read_text()
    except OSError as exc:
        raise ConnectError(
            f"The scheduler at {address} is your gpu-dask-kit session {session_id}, which uses TLS, but its credentials "
            f"in {path} cannot be read ({exc.strerror or exc}). They are made once per session: close that session "
            "(session.close() in its notebook, or `gpu-dask-kit sessions --stop ID`) and start a new one."
        ) from exc
    return Security(require_encryption=True, tls_ca_file=cert, tls_client_cert=cert, tls_client_key=key)


def for_record(record: registry.SessionRecord) -> Any:
    """Client credentials for a session of this user, or None when it does not use TLS."""
    address = record.scheduler_address or ""
    if not address.startswith("tls://") or record.started_by == "connect":
        return None
    return load(record.id, address)


def for_address(address: str) -> Any:
    """Client credentials of this user's kit session whose scheduler is at ``address``, or None."""
    for record in registry.list_sessions():
        if record.scheduler_address == address and record.started_by != "connect":
            return for_record(record)
    return None


def tls_session(text: str) -> registry.SessionRecord | None:
    """This user's TLS kit session whose address, written with ``tcp://``, appears in ``text`` (an address
    or an error message): someone tried plain TCP on it."""
    for record in registry.list_sessions():
        address = record.scheduler_address or ""
        if address.startswith("tls://") and record.started_by != "connect" and "tcp://" + address.removeprefix("tls://") in text:
            return record
    return None


def remove(session_id: str) -> None:
    """Delete a session's credentials (idempotent)."""
    shutil.rmtree(folder(session_id), ignore_errors=True)


def other_accounts() -> list[str]:
    """Login accounts of this machine other than the current one (uid >= 1000, a real shell)."""
    me = os.getuid()
    return sorted(p.pw_name for p in pwd.getpwall() if p.pw_uid != me and 1000 <= p.pw_uid < 65534 and not any(p.pw_shell.endswith(s) for s in _NO_LOGIN))


def exposure(host: str, address: str | None) -> str | None:
    """Who could connect to a plain-TCP scheduler at ``address`` (None when nobody but this account could)."""
    who = []
    if host not in ("127.0.0.1", "localhost", "::1"):
        who.append(f"every machine that can reach {host}")
    if os.environ.get("JUPYTERHUB_USER") or os.environ.get("JUPYTERHUB_API_TOKEN"):
        who.append("every other JupyterHub user of this machine")
    others = other_accounts()
    if others:
        names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        who.append(f"the {len(others)} other account(s) of this machine ({names})")
    if not who:
        return None
    return (
        f"security=False: the scheduler at {address} accepts plain connections from {'; '.join(who)}; any of them can "
        "run code as you in its workers and read your files. Leave security at its default (TLS with this session's "
        "own certificate) unless you need plain TCP."
    )
