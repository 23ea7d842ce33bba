"""Configuration packages as the service takes them (a ZIP with config.json at its root), and its deployment
errors told by file: the service names the key path of the value an error is about
(`products.GadgetCover.contents[0]: ...`), and a config.json in folder a/b is the object at key path a.b
(docs: design config-packages.md §2), so the error belongs to the config.json of the deepest folder on its path."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CONFIG_FILE = "config.json"
JUNK = {".DS_Store", "__pycache__", ".git", "__MACOSX", "Thumbs.db"}
KEY_PATH = re.compile(r"^[A-Za-z0-9_$+\-]+(?:\.[A-Za-z0-9_$+\-]+|\[\d+\])*$")


def package_bytes(source: Path) -> bytes:
    """A folder zipped with its config.json at the ZIP root (junk and compiled files left out); a .zip as it is."""
    if source.is_file():
        return source.read_bytes()
    if not (source / CONFIG_FILE).is_file():
        raise FileNotFoundError(f"{source} has no {CONFIG_FILE}: a package folder holds config.json at its root")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if path.is_file() and not JUNK & set(relative.parts) and path.suffix != ".pyc":
                archive.write(path, relative.as_posix())
    return buffer.getvalue()


def config_files(source: Path) -> list[PurePosixPath]:
    """The package's config.json files, relative to its root (inside a ZIP: below its wrapping folder if any)."""
    if source.is_dir():
        return [PurePosixPath(p.relative_to(source).as_posix()) for p in source.rglob(CONFIG_FILE)]
    with zipfile.ZipFile(source) as archive:
        names = [PurePosixPath(n) for n in archive.namelist() if PurePosixPath(n).name == CONFIG_FILE]
    if names and PurePosixPath(CONFIG_FILE) not in names and len({n.parts[0] for n in names}) == 1:
        names = [PurePosixPath(*n.parts[1:]) for n in names]
    return names


@dataclass(frozen=True)
class PackageError:
    file: str | None
    """The config.json the error is about (relative to the package's root), when the error names a key path."""
    field: str
    """The JSON path of the value inside that file ("" for the file's object itself)."""
    message: str

    def line(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        return f"{where}: {self.message}" if where else self.message


def located(error: str, files: list[PurePosixPath]) -> PackageError:
    """One error of a deployment result with the file and field it is about."""
    path, separator, message = error.partition(": ")
    if not separator or not KEY_PATH.match(path):
        return PackageError(None, "", error)
    keys = path.replace("[", ".[").split(".")
    folders = {tuple(part.lower() for part in f.parent.parts): f for f in files}
    for depth in range(len(keys), -1, -1):
        prefix = keys[:depth]
        found = folders.get(tuple(key.lower() for key in prefix))
        if found is not None and not any(key.startswith("[") for key in prefix):
            field = ".".join(keys[depth:]).replace(".[", "[")
            return PackageError(found.as_posix(), field, message)
    return PackageError(None, path, message)
