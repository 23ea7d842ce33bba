"""Rendering a document in the sandbox (documents/rendering.py): a 10-page PDF from a Liquid template,
and the same template as HTML, so the PDF conversion's share shows. Each render starts a sandboxed
process (bubblewrap, the seccomp filters, the template libraries at /libs), as a documents job does.
Prints the first render (it copies the libraries once per process) and the median of the rest.

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
DATA = {"account": {"data": {"firstName": "Ada", "lastName": "Lovelace"}}, "pages": list(range(1, 11)),
        "rows": list(range(1, 31))}


def timed(output_format: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = rendering.render("liquid", TEMPLATE, DATA, output_format, page={"pageSize": "A4", "portrait": True})
    elapsed = time.perf_counter() - start
    assert isinstance(result, rendering.Rendered), result
    return elapsed, result.content


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--renders", type=int, default=5)
    renders = parser.parse_args().renders
    first, pdf = timed("pdf")
    from pypdf import PdfReader

    pages = len(PdfReader(io.BytesIO(pdf)).pages)
    pdf_times = [timed("pdf")[0] for _ in range(renders)]
    html_times = [timed("html")[0] for _ in range(renders)]
    print(f"10-page PDF ({pages} pages, {len(pdf)} bytes): first {first * 1000:.0f} ms, "
          f"median {statistics.median(pdf_times) * 1000:.0f} ms over {renders}")
    print(f"same template as HTML: median {statistics.median(html_times) * 1000:.0f} ms over {renders}")


if __name__ == "__main__":
    main()
