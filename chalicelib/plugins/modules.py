"""A deployed package's Python plugin modules, and the functions they define (found by parsing)."""
from __future__ import annotations

import ast
import io
import zipfile
from collections.abc import Mapping

PYTHON_PLUGIN_FOLDER = "plugins/python/"


def python_modules(package_zip: bytes) -> dict[str, bytes]:
    """The files under plugins/python/ of a package as the configuration download holds it."""
    with zipfile.ZipFile(io.BytesIO(package_zip)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()
                if info.filename.startswith(PYTHON_PLUGIN_FOLDER) and not info.is_dir()}


def defined_functions(module_files: Mapping[str, bytes]) -> frozenset[str]:
    """The top-level function names of the .py modules (a module that does not parse defines none:
    deployment refuses such packages)."""
    names: set[str] = set()
    for path, source in module_files.items():
        if not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError, RecursionError):
            continue
        names.update(node.name for node in tree.body if isinstance(node, ast.FunctionDef))
    return frozenset(names)
