"""Building configuration packages in memory for the configuration unit tests."""

import copy
import io
import json
import struct
import zipfile
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "socotra-configs"
PACKAGES = ("iag-motor-demo", "itemcare", "mgt-commercial")
SERVER_DOWNLOAD = FIXTURES / "_server-observed" / "iag-motor-demo" / "download"

_CENTRAL_DIRECTORY_HEADER = b"PK\x01\x02"


def zip_files(files: Mapping[str, bytes | str], directories: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for directory in directories:
            archive.writestr(zipfile.ZipInfo(directory.rstrip("/") + "/"), b"")
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def directory_files(directory: Path, wrap: str | None = None) -> dict[str, bytes]:
    prefix = f"{wrap}/" if wrap else ""
    return {
        prefix + path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@cache
def fixture_zip(name: str, wrap: str | None = None) -> bytes:
    return zip_files(directory_files(FIXTURES / name, wrap))


def fixture_model(name: str) -> dict[str, Any]:
    """The fixture's model merged independently of the code under test: each config.json at the
    key path of its directory, shallower files first."""
    return copy.deepcopy(_merged_directory(FIXTURES / name))


@cache
def _merged_directory(directory: Path) -> dict[str, Any]:
    model: dict[str, Any] = {}
    files = sorted(directory.rglob("config.json"), key=lambda path: (len(path.parts), path.parts))
    for path in files:
        node = model
        for key in path.relative_to(directory).parts[:-1]:
            node = node.setdefault(key, {})
        node.update(read_json(path))
    return model


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)


def patch_central_directory(data: bytes, name: str, offset: int, value: int, size: int = 4) -> bytes:
    """Overwrites a little-endian field of `name`'s central directory record (offset 8: flag
    bits, 24: uncompressed size), as a crafted or damaged archive would have it."""
    encoded = name.encode()
    position = data.find(_CENTRAL_DIRECTORY_HEADER)
    while position != -1:
        name_length = struct.unpack_from("<H", data, position + 28)[0]
        if data[position + 46 : position + 46 + name_length] == encoded:
            patched = bytearray(data)
            patched[position + offset : position + offset + size] = value.to_bytes(size, "little")
            return bytes(patched)
        position = data.find(_CENTRAL_DIRECTORY_HEADER, position + 4)
    raise KeyError(name)
