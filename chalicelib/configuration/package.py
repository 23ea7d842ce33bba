"""Configuration packages: a ZIP of JSON files <-> one ConfigurationRef dict plus opaque files.

Layout (design/config-packages.md §2): a `config.json` in directory `a/b` is the JSON object at
`model.a.b`, and every one of them is deep-merged into one model. The package root (the directory
holding the top-level `config.json`) is the ZIP root or its single top-level folder. Files under
`plugins/`, `products/<P>/plugins/` and `bootstrap/resources/resourceFiles/` are kept as bytes,
whatever their name; other files that are not `config.json` are kept as bytes too.

Uploads are untrusted: paths, sizes and JSON are checked before anything is believed, and sizes
are checked twice (declared sizes before inflating, inflated bytes while reading). Before the archive
is opened its members are counted; before anything is inflated the declared sizes of the config.json
files and of the Python plugin folder are held to their limits (zipfile never inflates a member beyond
its declared size). Plugin modules are never parsed here: configuration.service has them parsed in a
sandboxed process (sandbox/python_source.py) and `implemented_plugins` reads what that found.
"""

import io
import json
import re
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePosixPath
from typing import IO, Any

from chalicelib.configuration.schema import COLLECTIONS, lookup
from chalicelib.core import codes
from chalicelib.core.errors import ErrorCode

CONFIG_FILE = "config.json"
MAX_COMPRESSED_BYTES = 50 * 1024 * 1024
MAX_UNCOMPRESSED_BYTES = 500 * 1024 * 1024
PYTHON_PLUGIN_FOLDER = "plugins/python/"
MAX_MEMBERS = 10_000
"""Files in a package (the largest real package has 361): zipfile holds an object per member once the
archive is open, and a 50 MB archive can declare a million members."""
MAX_CONFIG_JSON_BYTES = 2 * 1024 * 1024
"""All config.json files of a package together (the largest real package has 145 KB): 4 MB of empty
objects took 300 MB and 5 s to read and validate, as parsed JSON takes up to 25 times its size in
memory and validation copies the model."""
MAX_PLUGIN_MODULE_BYTES = 256 * 1024
"""A Python plugin module: parsing hostile source can take 700 times its size in memory."""
MAX_PLUGINS_BYTES = 2 * 1024 * 1024
"""Everything under plugins/python/ together: it is copied into each plugin process's 16 MB disk."""
MAX_PLUGIN_FILES = 1000
"""Files under plugins/python/: each takes one of the 4,096 files a plugin process's disk may hold."""
MAX_JSON_DEPTH = 32
"""Objects and arrays nest at most this deep in a config.json: far deeper than any ConfigurationRef,
and shallow enough for the recursive merge, validation and formatting that follow."""
RESOURCE_FILES_FOLDER = ("bootstrap", "resources", "resourceFiles")

PACKAGE_NOT_ZIP = codes.CONFIG_PACKAGE_NOT_ZIP
PACKAGE_CORRUPT = codes.CONFIG_PACKAGE_CORRUPT
PACKAGE_UNSAFE_PATH = codes.CONFIG_PACKAGE_UNSAFE_PATH
PACKAGE_LAYOUT_INVALID = codes.CONFIG_PACKAGE_LAYOUT_INVALID
PACKAGE_INVALID_JSON = codes.CONFIG_PACKAGE_INVALID_JSON
PACKAGE_INVALID = codes.CONFIG_PACKAGE_INVALID
PACKAGE_TOO_LARGE = codes.CONFIG_PACKAGE_TOO_LARGE
PLUGIN_INVALID = codes.CONFIG_PLUGIN_INVALID
PLUGIN_TOO_LARGE = codes.CONFIG_PLUGIN_TOO_LARGE
_CENTRAL_DIRECTORY_RECORD = b"PK\x01\x02"

_READ_CHUNK_BYTES = 1024 * 1024
_IGNORED_FILE_NAMES = frozenset({".DS_Store"})
_IGNORED_TOP_FOLDERS = frozenset({"__MACOSX"})
_RESERVED_ROOT_FOLDERS = frozenset({"plugins"})
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_PLUGIN_KINDS = {"validate": "validation", "rate": "rating", "underwrite": "underwriting"}

_WORK_MANAGEMENT_LAYOUT = {
    "qualifications": 0,
    "tasks": 2,
    "activities": 2,
    "userAssociationRoles": 1,
    "assignmentRoles": 1,
}
_PRODUCER_MANAGEMENT_LAYOUT = {
    "producers": 1,
    "producerCodes": 1,
    "producerLicenses": 1,
    "producerAppointments": 1,
}
_ROOT_LAYOUT: dict[str, Any] = {
    **{collection: 1 for collection in COLLECTIONS},
    "workManagement": _WORK_MANAGEMENT_LAYOUT,
    "producerManagement": _PRODUCER_MANAGEMENT_LAYOUT,
}
"""How the writer splits the model into folders: an int n splits a map n levels deep (one folder
per key); a dict gives the layout per key; absent keys stay in their parent's config.json. Dict
values at the root that are not listed get a folder of their own (`bootstrap/config.json`), as
the server's download does."""


class PackageError(Exception):
    """A package that cannot be read. `code` says why; `errors` lists every problem found."""

    def __init__(self, code: ErrorCode, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.errors = errors or [message]


@dataclass(frozen=True)
class ConfigPackage:
    """`model`: the merged ConfigurationRef. `plugins` and `other_files`: package-relative path ->
    bytes; plugins are files under a `plugins/` folder, other_files everything else that is not a
    `config.json` (bootstrap resource files, templates, ...)."""

    model: dict[str, Any]
    plugins: dict[str, bytes] = field(default_factory=dict)
    other_files: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class BootstrapResource:
    """A bootstrap resource instance together with its file (config-packages.md §2 rule 5)."""

    instance: str
    static_name: str
    kind: str
    path: str
    content: bytes


_ConfigFile = tuple[tuple[str, ...], dict[str, Any]]
"""A config.json to write: its folder (as path segments) and its body."""


@dataclass(frozen=True)
class _Entry:
    info: zipfile.ZipInfo
    segments: tuple[str, ...]


# Reading ------------------------------------------------------------------------------------------


def read_package(
    data: bytes,
    *,
    max_compressed_bytes: int = MAX_COMPRESSED_BYTES,
    max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES,
) -> ConfigPackage:
    if len(data) > max_compressed_bytes:
        raise PackageError(
            PACKAGE_TOO_LARGE,
            f"package is {len(data)} bytes; the limit is {max_compressed_bytes} bytes compressed",
        )
    _check_member_count(data)
    with _open_zip(data) as archive:
        entries = _package_entries(archive)
        _check_declared_size(archive, max_uncompressed_bytes)
        root_depth = _package_root_depth([entry.segments for entry in entries])
        _check_declared_content(entries, root_depth)
        budget = _Budget(max_uncompressed_bytes)
        files = {entry: _inflate(archive, entry.info, budget) for entry in entries}
    return _assemble(files, root_depth)


def _open_zip(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        if data.startswith(b"PK"):
            raise PackageError(PACKAGE_CORRUPT, f"the ZIP archive is corrupt: {error}") from error
        raise PackageError(PACKAGE_NOT_ZIP, "the package is not a ZIP archive") from error


def _check_member_count(data: bytes) -> None:
    """Counted by their central directory records (zipfile reads one per member, whatever the end record
    declares), before zipfile makes an object of each."""
    members = data.count(_CENTRAL_DIRECTORY_RECORD)
    if members > MAX_MEMBERS:
        raise PackageError(
            PACKAGE_TOO_LARGE, f"the package holds {members} files; it may hold at most {MAX_MEMBERS} files"
        )


def _check_declared_content(entries: list[_Entry], root_depth: int) -> None:
    """The config.json files and the Python plugin folder within their limits, by declared sizes."""
    config_bytes = sum(entry.info.file_size for entry in entries if entry.segments[-1] == CONFIG_FILE)
    if config_bytes > MAX_CONFIG_JSON_BYTES:
        raise PackageError(
            PACKAGE_TOO_LARGE,
            f"the config.json files have {config_bytes} bytes; a package may "
            f"have at most {MAX_CONFIG_JSON_BYTES} bytes of config.json",
        )
    plugin_files = [
        ("/".join(entry.segments[root_depth:]), entry.info.file_size)
        for entry in entries
        if "/".join(entry.segments[root_depth:]).startswith(PYTHON_PLUGIN_FOLDER)
    ]
    if len(plugin_files) > MAX_PLUGIN_FILES:
        raise PackageError(
            PLUGIN_TOO_LARGE,
            f"{PYTHON_PLUGIN_FOLDER} holds {len(plugin_files)} files; it may hold at most {MAX_PLUGIN_FILES} files",
        )
    for path, size in plugin_files:
        if path.endswith(".py") and size > MAX_PLUGIN_MODULE_BYTES:
            raise PackageError(
                PLUGIN_TOO_LARGE, f"{path} has {size} bytes; a plugin module may have at most {MAX_PLUGIN_MODULE_BYTES}"
            )
    total = sum(size for _, size in plugin_files)
    if total > MAX_PLUGINS_BYTES:
        raise PackageError(
            PLUGIN_TOO_LARGE,
            f"the files under {PYTHON_PLUGIN_FOLDER} have {total} bytes; they "
            f"may have at most {MAX_PLUGINS_BYTES} bytes in all",
        )


def _package_entries(archive: zipfile.ZipFile) -> list[_Entry]:
    """The entries that carry content, with their path split into segments; refuses unsafe
    paths, encrypted entries and duplicates, and drops directories and desktop junk."""
    unsafe = [info.filename for info in archive.infolist() if _is_unsafe(info.filename)]
    if unsafe:
        raise PackageError(
            PACKAGE_UNSAFE_PATH,
            f"the package holds {len(unsafe)} path(s) outside the package folder, e.g. '{unsafe[0]}'",
            [f"{name}: absolute paths and '..' are not allowed" for name in unsafe],
        )
    entries: list[_Entry] = []
    seen: set[tuple[str, ...]] = set()
    for info in archive.infolist():
        segments = _segments(info.filename)
        if info.is_dir() or not segments or _is_junk(segments):
            continue
        if info.flag_bits & 0x1:
            raise PackageError(PACKAGE_INVALID, f"{info.filename}: encrypted entries are not supported")
        if segments in seen:
            raise PackageError(PACKAGE_INVALID, f"{info.filename}: the package holds this path twice")
        seen.add(segments)
        entries.append(_Entry(info, segments))
    return entries


def _segments(name: str) -> tuple[str, ...]:
    return tuple(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))


def _is_unsafe(name: str) -> bool:
    normalised = name.replace("\\", "/")
    return normalised.startswith("/") or bool(_WINDOWS_DRIVE.match(normalised)) or ".." in normalised.split("/")


def _is_junk(segments: tuple[str, ...]) -> bool:
    return segments[0] in _IGNORED_TOP_FOLDERS or segments[-1] in _IGNORED_FILE_NAMES


def _check_declared_size(archive: zipfile.ZipFile, limit: int) -> None:
    declared = sum(info.file_size for info in archive.infolist())
    if declared > limit:
        raise PackageError(
            PACKAGE_TOO_LARGE, f"package inflates to {declared} bytes; the limit is {limit} bytes uncompressed"
        )


def _package_root_depth(paths: list[tuple[str, ...]]) -> int:
    """0 when config.json is at the ZIP root, 1 when it is inside the only top-level folder."""
    if (CONFIG_FILE,) in paths:
        return 0
    top_level = sorted({path[0] for path in paths})
    if not top_level:
        raise PackageError(PACKAGE_LAYOUT_INVALID, "the package is empty")
    if len(top_level) > 1:
        raise PackageError(
            PACKAGE_LAYOUT_INVALID,
            "no config.json at the ZIP root, and more than one top-level entry "
            f"({', '.join(top_level)}): put config.json at the root or wrap the package in exactly one folder",
        )
    if (top_level[0], CONFIG_FILE) not in paths:
        raise PackageError(
            PACKAGE_LAYOUT_INVALID,
            f"no config.json at the ZIP root or directly inside the folder '{top_level[0]}'",
        )
    return 1


class _Budget:
    """Inflated bytes still allowed; guards the bytes actually read, whatever the headers said."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.remaining = limit

    def spend(self, size: int) -> None:
        self.remaining -= size
        if self.remaining < 0:
            message = f"package inflates to more than {self.limit} bytes uncompressed"
            raise PackageError(PACKAGE_TOO_LARGE, message)


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    try:
        with archive.open(info) as stream:
            return _read_bounded(stream, budget)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, NotImplementedError) as error:
        raise PackageError(PACKAGE_CORRUPT, f"{info.filename}: the ZIP entry is corrupt: {error}") from error


def _read_bounded(stream: IO[bytes], budget: _Budget) -> bytes:
    chunks = []
    while chunk := stream.read(_READ_CHUNK_BYTES):
        budget.spend(len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


def _assemble(files: dict[_Entry, bytes], root_depth: int) -> ConfigPackage:
    configs: list[tuple[tuple[str, ...], str, bytes]] = []
    plugins: dict[str, bytes] = {}
    other_files: dict[str, bytes] = {}
    for entry, content in files.items():
        segments = entry.segments[root_depth:]
        path = "/".join(segments)
        if _is_plugin_file(segments):
            plugins[path] = content
        elif segments[: len(RESOURCE_FILES_FOLDER)] == RESOURCE_FILES_FOLDER or segments[-1] != CONFIG_FILE:
            other_files[path] = content
        else:
            configs.append((segments[:-1], entry.info.filename, content))
    return ConfigPackage(_merge_configs(configs), plugins, other_files)


def _is_plugin_file(segments: tuple[str, ...]) -> bool:
    at_root = len(segments) > 1 and segments[0] == "plugins"
    in_product = len(segments) > 3 and segments[0] == "products" and segments[2] == "plugins"
    return at_root or in_product


def _merge_configs(configs: list[tuple[tuple[str, ...], str, bytes]]) -> dict[str, Any]:
    """Parses every config.json (reporting all invalid ones at once) and merges them by key path,
    shallower files first, so the more specific file wins where two set the same value."""
    parsed: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    errors: list[str] = []
    for key_path, name, content in sorted(configs, key=lambda config: (len(config[0]), config[0])):
        try:
            parsed.append((key_path, _parse_config(name, content)))
        except ValueError as error:
            errors.append(str(error))
    if errors:
        summary = errors[0] if len(errors) == 1 else f"{errors[0]} (and {len(errors) - 1} more)"
        raise PackageError(PACKAGE_INVALID_JSON, summary, errors)
    model: dict[str, Any] = {}
    for key_path, body in parsed:
        deep_merge(_node_at(model, key_path), body)
    return model


def _parse_config(name: str, content: bytes) -> dict[str, Any]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name}: not UTF-8 text (byte {error.start})") from error
    try:
        body = json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(f"{name}: nests objects and arrays more than {MAX_JSON_DEPTH} deep") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{name} line {error.lineno} column {error.colno}: {error.msg}") from error
    except _NotJson as error:
        raise ValueError(f"{name}: {error}") from error
    if not isinstance(body, dict):
        raise ValueError(f"{name}: must hold a JSON object")
    _check_shape(name, body)
    return body


def _check_shape(name: str, body: dict[str, Any]) -> None:
    """ValueError when `body` nests deeper than MAX_JSON_DEPTH or holds a string with a lone surrogate
    (`"\\ud800"` parses, but is no text: it cannot be stored nor answered as UTF-8)."""
    pending: list[tuple[Any, int]] = [(body, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"{name}: nests objects and arrays more than {MAX_JSON_DEPTH} deep")
            for key in item if isinstance(item, dict) else ():
                _check_text(name, key)
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, str):
            _check_text(name, item)


def _check_text(name: str, text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{name}: holds a string that is not Unicode text (a lone surrogate escape)") from None


class _NotJson(ValueError):
    pass


def _reject_constant(constant: str) -> Any:
    """Python's parser accepts NaN and Infinity; JSON does not (and the parser gives no position)."""
    raise _NotJson(f"{constant} is not a JSON number")


def _node_at(model: dict[str, Any], key_path: tuple[str, ...]) -> dict[str, Any]:
    node = model
    for key in key_path:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    return node


def deep_merge(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Merges source into target: objects key by key, anything else replaced."""
    for key, value in source.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_merge(target[key], value)
        else:
            target[key] = value


# Writing ------------------------------------------------------------------------------------------


def write_package(package: ConfigPackage) -> bytes:
    """The package as ZIP bytes in the server's download form (config-packages.md §4): one folder
    per entity, scalars in the root config.json, Jackson-style JSON; reading it gives back the
    same model and files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder, body in _config_files(package.model):
            archive.writestr(_zip_info("/".join((*folder, CONFIG_FILE))), dumps_json(body).encode("utf-8"))
        for path, content in {**package.plugins, **package.other_files}.items():
            archive.writestr(_zip_info(path), content)
    return buffer.getvalue()


def _zip_info(path: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _config_files(model: dict[str, Any]) -> list[_ConfigFile]:
    root_body: dict[str, Any] = {}
    files: list[_ConfigFile] = []
    for key, value in model.items():
        if isinstance(value, dict) and _is_folder_name(key) and key not in _RESERVED_ROOT_FOLDERS:
            files += _split(value, _ROOT_LAYOUT.get(key, 0), (key,))
        else:
            root_body[key] = value
    return [((), root_body), *files]


def _split(value: dict[str, Any], layout: int | dict[str, Any], folder: tuple[str, ...]) -> list[_ConfigFile]:
    if layout == 0:
        return [(folder, value)]
    files: list[_ConfigFile] = []
    body: dict[str, Any] = {}
    for key, child in value.items():
        child_layout = layout - 1 if isinstance(layout, int) else layout.get(key)
        if child_layout is not None and isinstance(child, dict) and _is_folder_name(key):
            files += _split(child, child_layout, (*folder, key))
        else:
            body[key] = child
    if body or not files:
        files.insert(0, (folder, body))
    return files


def _is_folder_name(key: str) -> bool:
    """A key that survives as a folder name and reads back as the same key."""
    return (
        key not in ("", ".", "..")
        and not any(character in key for character in "/\\:\0")
        and key not in _IGNORED_FILE_NAMES
        and key not in _IGNORED_TOP_FOLDERS
    )


def dumps_json(value: Any, level: int = 0) -> str:
    """JSON in the server's style (Jackson's default pretty printer): 2-space indent,
    `"key" : value`, arrays on one line. Decimals are written exactly."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        indent = "  " * (level + 1)
        members = ",\n".join(
            f"{indent}{_json_string(key)} : {dumps_json(item, level + 1)}" for key, item in value.items()
        )
        return "{\n" + members + "\n" + "  " * level + "}"
    if isinstance(value, list):
        return "[ " + ", ".join(dumps_json(item, level) for item in value) + " ]" if value else "[ ]"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} cannot be written as JSON")
        return str(value)
    return json.dumps(value)


def _json_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# Plugins and bootstrap resources ------------------------------------------------------------------


def python_modules(plugins: Mapping[str, bytes]) -> dict[str, bytes]:
    """The Python plugin modules among a package's plugin files (the .py files under plugins/python/)."""
    return {
        path: content
        for path, content in plugins.items()
        if path.startswith(PYTHON_PLUGIN_FOLDER) and path.endswith(".py")
    }


def implemented_plugins(module_functions: Mapping[str, Sequence[str]], product_names: Iterable[str]) -> dict[str, str]:
    """`"<kind>:<Product>" -> "<module path>:<function>"` for each product that has a plugin
    function under plugins/python/ (design/DECISIONS.md, Plugins): `rate_P` -> "rating:P",
    `validate_P` -> "validation:P", `underwrite_P` -> "underwriting:P"; the generic `rate`,
    `validate`, `underwrite` count for products without their own. `module_functions`: the top-level
    functions of each module, as parsing found them."""
    products = list(product_names)
    specific: dict[str, str] = {}
    generic: dict[str, str] = {}
    errors: list[str] = []
    for path in sorted(module_functions):
        for function in module_functions[path]:
            _register_plugin(function, f"{path}:{function}", products, specific, generic, errors)
    if errors:
        raise PackageError(PLUGIN_INVALID, errors[0], errors)
    for product in products:
        for kind, location in generic.items():
            specific.setdefault(f"{kind}:{product}", location)
    return specific


def _register_plugin(
    function: str,
    location: str,
    products: list[str],
    specific: dict[str, str],
    generic: dict[str, str],
    errors: list[str],
) -> None:
    if function in _PLUGIN_KINDS:
        registry, key = generic, _PLUGIN_KINDS[function]
    else:
        prefix, _, product = function.partition("_")
        if prefix not in _PLUGIN_KINDS or product not in products:
            return
        registry, key = specific, f"{_PLUGIN_KINDS[prefix]}:{product}"
    if key in registry and registry[key] != location:
        errors.append(f"{location}: {function} is also defined in {registry[key].split(':')[0]}")
    else:
        registry[key] = location


def bootstrap_resources(package: ConfigPackage) -> list[BootstrapResource]:
    """Each bootstrap resource instance that has a file: `resourceFiles/<kind>/<instance>.<ext>`
    whose base name is a key of bootstrap.resources.resourceInstances. Instances without a file
    are skipped, as the platform does."""
    instances = lookup(package.model, "bootstrap.resources.resourceInstances")
    if not isinstance(instances, dict):
        return []
    found = []
    for path, content in sorted(package.other_files.items()):
        segments = tuple(path.split("/"))
        if segments[:3] != RESOURCE_FILES_FOLDER or len(segments) != 5:
            continue
        instance = PurePosixPath(segments[4]).stem
        spec = instances.get(instance)
        static_name = spec.get("staticName") if isinstance(spec, dict) else None
        if isinstance(static_name, str):
            found.append(BootstrapResource(instance, static_name, segments[3], path, content))
    return found
