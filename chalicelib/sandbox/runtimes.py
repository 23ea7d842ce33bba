"""What tenant code runs with, the same on this machine and in the tenant function: the scripts that run it
(the plugin child, the document renderer and the tenant function's handler, each a standard-library script
the service never imports) and the libraries the renderer imports (template engines, the PDF converter).

The local sandbox starts the scripts from these paths and binds the libraries read-only at /libs
(kernel.libraries); plugins/tenant_code.py zips the same files, from the same environment, into the tenant's
Lambda function. The paths name files of the plugins and documents packages as data: nothing here imports
them."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHALICELIB = Path(__file__).resolve().parents[1]
PLUGIN_SCRIPT = CHALICELIB / "plugins" / "child.py"
RENDERER_SCRIPT = CHALICELIB / "documents" / "render_child.py"
TENANT_HANDLER_SCRIPT = CHALICELIB / "plugins" / "tenant_handler.py"

RENDERER_LIBRARIES = (
    "liquid",
    "airspeed",
    "xhtml2pdf",
    "reportlab",
    "html5lib",
    "webencodings",
    "six.py",
    "pypdf",
    "PIL",
    "pillow.libs",
    "arabic_reshaper",
    "svglib",
    "lxml",
    "cssselect2",
    "tinycss2",
    "babel",
    "pytz",
    "markupsafe",
    "cachetools",
    "dateutil",
    "importlib_resources",
    "typing_extensions.py",
    "charset_normalizer",
)
"""What the template engines and the PDF converter import: entries of the environment's site-packages."""


MB = 1024 * 1024


@dataclass(frozen=True)
class RendererLimits:
    timeout_seconds: float = 20.0
    """Wall clock of one render, PDF conversion included; the host kills the process when it passes."""
    cpu_seconds: int = 20
    memory_bytes: int = 768 * MB
    """Address space: the converter's libraries alone map about 200 MB."""
    max_output_bytes: int = 10 * MB
    """The rendered text and the PDF, each."""
    disk_bytes: int = 32 * MB
    max_open_files: int = 64


@functools.lru_cache(maxsize=1)
def site_packages() -> str:
    """The folder the service's dependencies are installed in (on Lambda: the task root)."""
    spec = importlib.util.find_spec("pydantic")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("cannot find the environment's site-packages")
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def library_files(names: tuple[str, ...] = RENDERER_LIBRARIES) -> Iterator[tuple[str, Path]]:
    """(path relative to site-packages, file) of every file of the installed entries `names`, test folders
    and byte code left out; names not installed are skipped."""
    root = Path(site_packages())
    for name in names:
        source = root / name
        if source.is_file():
            yield name, source
        elif source.is_dir():
            for folder, folders, files in os.walk(source):
                folders[:] = sorted(f for f in folders if f not in ("tests", "__pycache__"))
                for file in sorted(files):
                    path = Path(folder, file)
                    yield path.relative_to(root).as_posix(), path
