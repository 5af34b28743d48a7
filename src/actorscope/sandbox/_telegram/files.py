"""Files the bot uploads: ``file_id`` values, ``getFile`` paths and the bytes to download.

An upload (a multipart part) becomes a :class:`StoredFile` with a fresh ``file_id`` that later
calls may send again; ``getFile`` answers its ``file_path``, and
``/file/bot<token>/<file_path>`` serves its bytes, as on Telegram. The emulator is offline, so
a file given by URL is refused with the error Telegram gives for a URL it cannot fetch.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError

__all__ = ["MAX_DOWNLOAD_SIZE", "SAMPLE_PNG", "FileStore", "StoredFile", "Upload", "image_size"]

JSON = dict[str, Any]
#: The largest file ``getFile`` lets a bot download (20 MB), as on Telegram.
MAX_DOWNLOAD_SIZE = 20 * 1024 * 1024
_WRONG_FILE = "Bad Request: wrong file identifier/HTTP URL specified"
_URL_REFUSED = "Bad Request: failed to get HTTP URL content"
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD})
#: A 2x2 PNG: the photo a user sends when a test or the prompt names none.
SAMPLE_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00\x00"
    b"\x00\xfd\xd4\x9as\x00\x00\x00\x10IDATx\xdac\xf8\xcf\xc0\x00D\x0c\x10\n\x00\x1f"
    b"\xee\x03\xfdc^\xbb[\x00\x00\x00\x00IEND\xaeB`\x82"
)


@dataclass(frozen=True, slots=True)
class Upload:
    """One uploaded multipart part: its file name, content type and bytes."""

    filename: str | None
    mime_type: str | None
    content: bytes

    def describe(self) -> JSON:
        """What the call log shows instead of the bytes."""
        return {"filename": self.filename, "mime_type": self.mime_type, "size": len(self.content)}


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A file the emulator keeps: ids, download path, name, type and content."""

    file_id: str
    file_unique_id: str
    file_path: str
    file_name: str | None
    mime_type: str | None
    content: bytes

    def file_json(self) -> JSON:
        """The Bot API ``File`` object (what ``getFile`` answers)."""
        return {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": len(self.content),
            "file_path": self.file_path,
        }


def image_size(content: bytes) -> tuple[int, int]:
    """``(width, height)`` of a PNG or JPEG image; ``(0, 0)`` when it is neither."""
    if content.startswith(_PNG) and len(content) >= 24:
        width, height = struct.unpack(">II", content[16:24])
        return int(width), int(height)
    if not content.startswith(b"\xff\xd8"):
        return 0, 0
    at = 2
    # Each pass skips one JPEG segment, so the loop ends within len(content) steps.
    while at + 9 <= len(content) and content[at] == 0xFF:
        marker = content[at + 1]
        (length,) = struct.unpack(">H", content[at + 2 : at + 4])
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", content[at + 5 : at + 9])
            return int(width), int(height)
        if length < 2:
            break
        at += 2 + length
    return 0, 0


class FileStore:
    """Every file uploaded to the emulator, by ``file_id`` and by ``file_path``."""

    def __init__(self) -> None:
        self._by_id: dict[str, StoredFile] = {}
        self._by_path: dict[str, StoredFile] = {}
        self._numbers = itertools.count(1)

    def resolve(self, value: Upload | str, kind: str) -> StoredFile:
        """Store an upload, or find a ``file_id`` sent again (``kind``: photos, documents)."""
        if isinstance(value, Upload):
            return self._store(value, kind)
        if value.startswith(("http://", "https://")):
            raise BotApiError(400, _URL_REFUSED)
        found = self._by_id.get(value)
        if found is None:
            raise BotApiError(400, _WRONG_FILE)
        return found

    def get(self, file_id: str) -> StoredFile:
        """The file with ``file_id``; ``wrong file identifier`` otherwise."""
        found = self._by_id.get(file_id)
        if found is None:
            raise BotApiError(400, _WRONG_FILE)
        return found

    def by_path(self, file_path: str) -> StoredFile | None:
        """The file served at ``/file/bot<token>/<file_path>``, or ``None``."""
        return self._by_path.get(file_path)

    def _store(self, upload: Upload, kind: str) -> StoredFile:
        if not upload.content:
            raise BotApiError(400, "Bad Request: file must be non-empty")
        number = next(self._numbers)
        name = upload.filename or f"file_{number}"
        suffix = name.rpartition(".")[2] if "." in name else "bin"
        stored = StoredFile(
            file_id=f"{kind[:2].upper()}ACAgIAAxk{number:08d}",
            file_unique_id=f"AQAD{number:08d}",
            file_path=f"{kind}/file_{number}.{suffix}",
            file_name=upload.filename,
            mime_type=upload.mime_type,
            content=upload.content,
        )
        self._by_id[stored.file_id] = stored
        self._by_path[stored.file_path] = stored
        return stored
