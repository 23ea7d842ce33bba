"""A deployed package's Python plugin modules."""

from __future__ import annotations

import io
import zipfile

PYTHON_PLUGIN_FOLDER = "plugins/python/"


def python_modules(package_zip: bytes) -> dict[str, bytes]:
    """The files under plugins/python/ of a package as the configuration download holds it."""
    with zipfile.ZipFile(io.BytesIO(package_zip)) as archive:
        return {
            info.filename: archive.read(info)
            for info in archive.infolist()
            if info.filename.startswith(PYTHON_PLUGIN_FOLDER) and not info.is_dir()
        }
