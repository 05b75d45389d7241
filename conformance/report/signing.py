"""Optional Ed25519 signatures on certificate.json, with a key the vendor holds.

The signature covers the certificate's canonical JSON (sorted keys, no spaces) without its
``signature`` field; the certificate in turn holds the SHA-256 of results.json, so a valid
signature vouches for both files. lakecert never holds a private key: the vendor signs with
``lakecert sign-certificate --key`` and publishes the public key through a channel its users trust
(docs/results.md, "Trust model"). Uses ``cryptography`` (the ``sign`` extra).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from conformance.config import ConfigError

ALGORITHM = "ed25519"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise ConfigError("signing needs the `cryptography` package: pip install 'lakecert[sign]'") from None
    return serialization


def canonical(cert: dict[str, Any]) -> bytes:
    """The signed bytes: the certificate without its signature, in canonical JSON."""
    unsigned = {k: v for k, v in cert.items() if k != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _load_key(path: Path, private: bool) -> Any:
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    try:
        data = path.read_bytes()
        key = (
            serialization.load_pem_private_key(data, password=None)
            if private
            else serialization.load_pem_public_key(data)
        )
    except (OSError, ValueError, TypeError) as e:
        kind = "private" if private else "public"
        raise ConfigError(f"{path} is not a readable unencrypted PEM {kind} key: {e}") from None
    wanted = Ed25519PrivateKey if private else Ed25519PublicKey
    if not isinstance(key, wanted):
        raise ConfigError(f"{path} is not an Ed25519 key (openssl genpkey -algorithm ed25519)")
    return key


def public_key_id(public_key: Any) -> str:
    """A short name of a public key: the hex of its raw 32 bytes' first 8 bytes."""
    serialization = _crypto()
    raw: bytes = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw[:8].hex()


def sign(cert: dict[str, Any], private_key_path: Path) -> dict[str, Any]:
    """The certificate with a ``signature`` of the vendor's private key."""
    key = _load_key(private_key_path, private=True)
    value = base64.b64encode(key.sign(canonical(cert))).decode()
    return {**cert, "signature": {"algorithm": ALGORITHM, "key_id": public_key_id(key.public_key()), "value": value}}


def signature_problem(cert: dict[str, Any], public_key_path: Path) -> str | None:
    """Why the certificate's signature does not hold for this public key; None when it does."""
    key = _load_key(public_key_path, private=False)
    from cryptography.exceptions import InvalidSignature

    sig = cert.get("signature")
    if not isinstance(sig, dict) or not isinstance(sig.get("value"), str):
        return "the certificate is not signed"
    if sig.get("algorithm") != ALGORITHM:
        return f"unknown signature algorithm {sig.get('algorithm')!r}"
    try:
        key.verify(base64.b64decode(sig["value"], validate=True), canonical(cert))
    except (InvalidSignature, ValueError):
        return f"the signature does not match this key ({public_key_id(key)}) and certificate"
    return None
