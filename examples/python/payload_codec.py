"""The bridge's payload codec in Python: a Python worker reads and writes the payloads the bridge and the TypeScript
workers encrypt, and they read its own.

MCP_PAYLOAD_KEYS names a file of "keyId base64key" lines (32-byte AES-256 keys; # comments; mode 600): the first key
encrypts, every key decrypts. A payload is encrypted as Temporal's encryption samples do it: AES-256-GCM over the
serialized Payload, data = 12-byte nonce + ciphertext + 16-byte tag, metadata encoding "binary/encrypted" and
"encryption-key-id" naming the key. A payload that is not encrypted passes through; one whose key the file does not
hold raises an error that names the key, as the bridge's own codec does.
"""

import base64
import binascii
import os
import re
import stat
from pathlib import Path
from typing import Iterable, List, Optional

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCRYPTED_ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class PayloadKeysError(RuntimeError):
    """Raised when the keys file cannot be used: missing, malformed, a key of the wrong length, readable by others."""


def read_payload_keys(path: str) -> "list[tuple[str, bytes]]":
    """The keys of the file at `path`, the encrypting one first; raises PayloadKeysError saying what is wrong."""
    file = Path(path)
    try:
        mode = file.stat().st_mode
        if not stat.S_ISREG(mode):
            raise PayloadKeysError(f"{path} is not a file")
        if mode & 0o077:
            raise PayloadKeysError(
                f"{path} may be read or written by others (mode {mode & 0o777:o}): it holds the keys of every task's data; chmod 600 {path}"
            )
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise PayloadKeysError(f"cannot read the keys file {path}: {error}") from error
    keys: List[tuple] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        where = f"{path} line {number}"
        if len(fields) != 2:
            raise PayloadKeysError(f'{where}: expected "keyId base64key", found {len(fields)} field(s)')
        key_id, encoded = fields
        if not _KEY_ID.match(key_id):
            raise PayloadKeysError(f'{where}: the key id "{key_id}" is not 1-64 letters, digits, ".", "_" or "-"')
        if any(key_id == known for known, _ in keys):
            raise PayloadKeysError(f'{where}: the key id "{key_id}" is given twice')
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_" if ("-" in encoded or "_" in encoded) else None, validate=True)
        except (binascii.Error, ValueError) as error:
            raise PayloadKeysError(f'{where}: the key of "{key_id}" is not base64') from error
        if len(key) != 32:
            raise PayloadKeysError(f'{where}: the key of "{key_id}" is {len(key)} bytes; AES-256 needs 32 (make one with: openssl rand -base64 32)')
        keys.append((key_id, key))
    if not keys:
        raise PayloadKeysError(f'{path} holds no key: write a "keyId base64key" line (openssl rand -base64 32)')
    return keys


class EncryptionCodec(PayloadCodec):
    """Encrypts under the first key, decrypts under the key a payload names (see the module's comment)."""

    def __init__(self, keys: "list[tuple[str, bytes]]", source: str = "the payload keys") -> None:
        self._encrypting_id = keys[0][0]
        self._keys = {key_id: AESGCM(key) for key_id, key in keys}
        self._source = source

    @property
    def encrypting_key_id(self) -> str:
        return self._encrypting_id

    async def encode(self, payloads: Iterable[Payload]) -> List[Payload]:
        encoded = []
        for payload in payloads:
            nonce = os.urandom(12)
            data = nonce + self._keys[self._encrypting_id].encrypt(nonce, payload.SerializeToString(), None)
            encoded.append(
                Payload(metadata={"encoding": ENCRYPTED_ENCODING, KEY_ID_METADATA: self._encrypting_id.encode()}, data=data)
            )
        return encoded

    async def decode(self, payloads: Iterable[Payload]) -> List[Payload]:
        decoded = []
        for payload in payloads:
            if payload.metadata.get("encoding") != ENCRYPTED_ENCODING:
                decoded.append(payload)
                continue
            key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode()
            cipher = self._keys.get(key_id)
            if cipher is None:
                raise ValueError(
                    f'data encrypted with key "{key_id}" cannot be read: {self._source} does not hold that key; '
                    f'add its "{key_id} <base64 key>" line to the file (after the first line, which encrypts)'
                )
            try:
                plaintext = cipher.decrypt(payload.data[:12], payload.data[12:], None)
            except InvalidTag as error:
                raise ValueError(
                    f'data encrypted with key "{key_id}" does not decrypt: the key under that id is not the one that encrypted it, or the data was altered'
                ) from error
            decoded.append(Payload.FromString(plaintext))
        return decoded


def payload_codec_from_env() -> Optional[EncryptionCodec]:
    """The codec of the keys file MCP_PAYLOAD_KEYS names, or None when it is unset; raises PayloadKeysError."""
    path = os.environ.get("MCP_PAYLOAD_KEYS", "").strip()
    if not path:
        return None
    try:
        return EncryptionCodec(read_payload_keys(path), f"the keys file {path} (MCP_PAYLOAD_KEYS)")
    except PayloadKeysError as error:
        raise PayloadKeysError(f"MCP_PAYLOAD_KEYS: {error}") from error
