"""Rendering a document in the sandbox (documents/rendering.py): a 10-page PDF from a Liquid template, a 1-page
PDF, and the 10-page template as HTML, so the PDF conversion's share shows; each cold (the render starts its
sandboxed process: bubblewrap, the seccomp filters, the template libraries at /libs, their imports, as a
documents job does without warm renderers) and warm (a renderer started ahead with the libraries imported
waits: WarmRenderers, issue 28 point 4; the benchmark waits for it to be ready before each render, outside the
time). Prints the first render (it copies the libraries once per process) and the medians.

    .venv/bin/python benchmarks/documents.py [--renders N]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chalicelib.documents import rendering  # noqa: E402

TEMPLATE = """<html><body>{% for page in pages %}
<h1>Schedule page {{ page }} for {{ account.data.firstName }} {{ account.data.lastName }}</h1>
<table>{% for row in rows %}<tr><td>Vehicle {{ row }}</td><td>{{ page }}-{{ row }}</td><td>1200.00</td></tr>
{% endfor %}</table><pdf:nextpage />{% endfor %}</body></html>"""
DATA = {
    "account": {"data": {"firstName": "Ada", "lastName": "Lovelace"}},
    "pages": list(range(1, 11)),
    "rows": list(range(1, 31)),
}
ONE_PAGE = {**DATA, "pages": [1], "rows": list(range(1, 11))}
WARM_RENDERERS = 2


def timed(output_format: str, data: dict = DATA) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = rendering.render("liquid", TEMPLATE, data, output_format, page={"pageSize": "A4", "portrait": True})
    elapsed = time.perf_counter() - start
    assert isinstance(result, rendering.Rendered), result
    return elapsed, result.content


def median_ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--renders", type=int, default=5)
    renders = parser.parse_args().renders
    rendering.use_warm_renderers(0)
    first, pdf = timed("pdf")
    from pypdf import PdfReader

    pages = len(PdfReader(io.BytesIO(pdf)).pages)
    print(f"10-page PDF: {pages} pages, {len(pdf)} bytes; the first render {first * 1000:.0f} ms")
    cases = (("10-page PDF", "pdf", DATA), ("1-page PDF", "pdf", ONE_PAGE), ("10-page template as HTML", "html", DATA))
    cold = {label: [timed(fmt, data)[0] for _ in range(renders)] for label, fmt, data in cases}
    pool = rendering.use_warm_renderers(WARM_RENDERERS)
    pool.fill()
    warm: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for _ in range(renders):
        for label, fmt, data in cases:
            deadline = time.monotonic() + 30
            while pool.waiting() < WARM_RENDERERS and time.monotonic() < deadline:
                time.sleep(0.01)
            assert pool.waiting(), "no warm renderer started"
            warm[label].append(timed(fmt, data)[0])
    rendering.use_warm_renderers(0)
    for label, _, _ in cases:
        print(
            f"{label:<26} cold median {median_ms(cold[label]):>8}   warm median {median_ms(warm[label]):>8}   "
            f"({renders} each)"
        )


if __name__ == "__main__":
    main()
