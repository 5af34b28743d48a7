"""Telegram Passport: the ``passport_data`` a user shares, encrypted as Telegram encrypts it.

Each value (an element's data, each file, and the credentials) is padded with 32-255 random
bytes (the first one gives the padding's length) to a multiple of 16, hashed with SHA-256 and
encrypted with AES-256-CBC under ``SHA-512(secret + hash)`` (key: its first 32 bytes, IV: the
next 16). The credentials (each value's secret and hash, and the bot's nonce) are encrypted the
same way; their secret is encrypted with the bot's public key (RSA-OAEP, SHA-1), the key the
bot's owner gave BotFather. See https://core.telegram.org/passport#decrypting-data.

Needs the ``cryptography`` package (python-telegram-bot's ``passport`` extra).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Mapping
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import FileStore, Upload

__all__ = ["DATA_TYPES", "FILE_TYPES", "ID_DOCUMENT_TYPES", "passport_data"]

JSON = dict[str, Any]
#: Elements whose value is a plain string, sent unencrypted.
PLAIN_TYPES = frozenset({"phone_number", "email"})
#: Elements whose value is data only.
DATA_TYPES = frozenset({"personal_details", "address"})
#: Identity documents: ``{"data": {...}, "front_side": b"...", "reverse_side": ...,
#: "selfie": ..., "translation": [...]}``.
ID_DOCUMENT_TYPES = frozenset({"passport", "driver_license", "identity_card", "internal_passport"})
#: Documents that are scans only: ``{"files": [b"...", ...], "translation": [...]}``.
FILE_TYPES = frozenset(
    {
        "utility_bill",
        "bank_statement",
        "rental_agreement",
        "passport_registration",
        "temporary_registration",
    }
)
_SINGLE_FILES = ("front_side", "reverse_side", "selfie")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _encrypt(plain: bytes) -> tuple[bytes, bytes, bytes]:
    """``(ciphertext, hash, secret)`` of ``plain``, as Telegram Passport encrypts values."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    padding = 32 + (-(len(plain) + 32) % 16)
    padding += 16 * secrets.randbelow((255 - padding) // 16 + 1)
    padded = bytes([padding]) + secrets.token_bytes(padding - 1) + plain
    digest = hashlib.sha256(padded).digest()
    secret = secrets.token_bytes(32)
    keyed = hashlib.sha512(secret + digest).digest()
    encryptor = Cipher(algorithms.AES(keyed[:32]), modes.CBC(keyed[32:48])).encryptor()
    return encryptor.update(padded) + encryptor.finalize(), digest, secret


def _file(files: FileStore, content: object, date: int, where: str) -> tuple[JSON, JSON]:
    """The ``PassportFile`` of an encrypted scan, and its credentials."""
    if not isinstance(content, bytes) or not content:
        raise BotApiError(400, f"Bad Request: {where} must be the scan's bytes")
    encrypted, digest, secret = _encrypt(content)
    stored = files.resolve(Upload("scan.jpg", "application/octet-stream", encrypted), "passport")
    passport_file = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "file_size": len(encrypted),
        "file_date": date,
    }
    return passport_file, {"file_hash": _b64(digest), "secret": _b64(secret)}


def _element(kind: str, value: object, files: FileStore, date: int) -> tuple[JSON, JSON | None]:
    """One ``EncryptedPassportElement`` and its ``SecureValue`` credentials (``None`` for
    phone numbers and emails, which are not encrypted)."""
    where = f"passport element {kind!r}"
    if kind in PLAIN_TYPES:
        if not isinstance(value, str) or not value:
            raise BotApiError(400, f"Bad Request: {where} must be a non-empty string")
        digest = hashlib.sha256(f"{kind}:{value}".encode()).digest()
        return {"type": kind, kind: value, "hash": _b64(digest)}, None
    if kind not in DATA_TYPES | ID_DOCUMENT_TYPES | FILE_TYPES:
        raise BotApiError(400, f"Bad Request: unknown passport element type {kind!r}")
    parts: Mapping[str, Any] = {"data": value} if kind in DATA_TYPES else _mapping(value, where)
    element: JSON = {"type": kind}
    credentials: JSON = {}
    allowed = {"data"} if kind in DATA_TYPES else set()
    if kind in ID_DOCUMENT_TYPES:
        allowed |= {"data", *_SINGLE_FILES, "translation"}
    if kind in FILE_TYPES:
        allowed |= {"files", "translation"}
    unknown = sorted(set(parts) - allowed)
    if unknown:
        raise BotApiError(400, f"Bad Request: {where} has no part {unknown[0]!r}")
    if "data" in parts:
        data = _mapping(parts["data"], f"{where} data")
        encrypted, digest, secret = _encrypt(json.dumps(data).encode())
        element["data"] = _b64(encrypted)
        credentials["data"] = {"data_hash": _b64(digest), "secret": _b64(secret)}
    for name in _SINGLE_FILES:
        if name in parts:
            element[name], credentials[name] = _file(files, parts[name], date, f"{where} {name}")
    for name in ("files", "translation"):
        if name in parts:
            scans = parts[name]
            if not isinstance(scans, list) or not scans:
                raise BotApiError(400, f"Bad Request: {where} {name} must be a list of scans")
            pairs = [_file(files, scan, date, f"{where} {name}") for scan in scans]
            element[name] = [p for p, _ in pairs]
            credentials[name] = [c for _, c in pairs]
    if kind in FILE_TYPES and "files" not in parts:
        raise BotApiError(400, f"Bad Request: {where} needs its files")
    whole = json.dumps(element, sort_keys=True).encode()
    element["hash"] = _b64(hashlib.sha256(whole).digest())
    return element, credentials


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise BotApiError(400, f"Bad Request: {where} must be a mapping")
    return value


def passport_data(
    public_key: bytes, nonce: str, elements: Mapping[str, object], files: FileStore, date: int
) -> JSON:
    """The ``PassportData`` of ``elements`` (type -> value), for the bot with ``public_key``
    (PEM) that asked with ``nonce``; scans are stored in ``files`` encrypted."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    if not elements:
        raise BotApiError(400, "Bad Request: a passport share needs at least one element")
    try:
        key = serialization.load_pem_public_key(public_key)
    except ValueError:
        raise BotApiError(400, "Bad Request: the bot's passport key is no PEM public key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise BotApiError(400, "Bad Request: the bot's passport key must be an RSA key")
    shared: list[JSON] = []
    secure_data: JSON = {}
    for kind, value in elements.items():
        element, credentials = _element(kind, value, files, date)
        shared.append(element)
        if credentials is not None:
            secure_data[kind] = credentials
    plain = json.dumps({"secure_data": secure_data, "nonce": nonce}).encode()
    encrypted, digest, secret = _encrypt(plain)
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)  # noqa: S303 - Telegram's scheme
    return {
        "data": shared,
        "credentials": {
            "data": _b64(encrypted),
            "hash": _b64(digest),
            "secret": _b64(key.encrypt(secret, oaep)),
        },
    }
