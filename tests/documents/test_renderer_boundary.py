"""Templates are tenant code: each escape a hostile template can try, against the renderer itself
(documents/rendering.py: the plugins' kernel boundary, limits, and a PDF converter that fetches
nothing). A control beside each refusal shows the check could fail."""
from __future__ import annotations

import base64
import glob
import http.server
import io
import os
import threading
from collections.abc import Iterator

import pytest
from pypdf import PdfReader

from chalicelib.documents import rendering
from chalicelib.documents.rendering import Rendered, RenderFailed

SHORT = rendering.Limits(timeout_seconds=4, cpu_seconds=3, max_output_bytes=256 * 1024)
DATA = {"account": {"data": {"firstName": "Ada"}}, "items": [1, 2, 3]}
IMAGE_ON_THE_SANDBOXES_DISK = sorted(glob.glob("/usr/share/**/*.png", recursive=True))[:1]
"""A PNG under /usr, which the sandbox mounts read-only: the converter could read it, were it allowed."""


def rendered(engine: rendering.Engine, template: str, output_format: str = "html") -> bytes:
    result = rendering.render(engine, template, DATA, output_format, limits=SHORT)
    assert isinstance(result, Rendered), result
    return result.content


def images_in(pdf: bytes) -> int:
    found = 0
    for page in PdfReader(io.BytesIO(pdf)).pages:
        found += len(page.images)
    return found


def png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 0, 0)).save(buffer, "PNG")
    return buffer.getvalue()


class _Counting(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        _Counting.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png" if self.path.endswith(".png") else "text/css")
        self.end_headers()
        self.wfile.write(png() if self.path.endswith(".png") else b"h1 { color: red; }")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web_server() -> Iterator[str]:
    _Counting.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_velocity_walks_from_a_value_to_its_class_reach_nothing_of_the_host():
    walks = ["$account.__class__", "$account.__class__.__mro__", "$account.data.__class__.__subclasses__()",
             "$items.__class__.__base__.__subclasses__()", "$account.__init__.__globals__", "$account._private"]
    text = rendered("velocity", " | ".join(walks)).decode()

    assert text == " | ".join(walks)  # unresolved names render as written, and nothing else
    assert rendered("velocity", "$account.data.firstName has $items.size() items") == b"Ada has 3 items"


def test_templates_read_no_file_through_includes():
    for engine, template in (("velocity", '#include("/etc/passwd")'), ("velocity", '#parse("/etc/hostname")'),
                             ("liquid", "{% include '/etc/passwd' %}"), ("liquid", "{% render '../../etc/passwd' %}")):
        result = rendering.render(engine, template, DATA, "text", limits=SHORT)  # type: ignore[arg-type]
        assert isinstance(result, RenderFailed) and result.stage == "render", (template, result)
        assert "root:" not in result.message


@pytest.mark.parametrize("engine, template", [
    ("liquid", "{% for i in (1..1000000000) %}{% endfor %}"),
    ("velocity", "#foreach($i in [1..1000000000])#end"),
    ("velocity", "#macro(f)#f()#end#f()"),
])
def test_a_template_that_never_ends_is_stopped_within_the_limits(engine, template):
    result = rendering.render(engine, template, DATA, "text", limits=SHORT)

    assert isinstance(result, RenderFailed) and result.stage == "render"


def test_huge_output_is_refused_not_stored():
    template = "{% for i in (1..100000) %}0123456789{% endfor %}"  # 1,000,000 bytes, over the 256 KB limit

    result = rendering.render("liquid", template, DATA, "text", limits=SHORT)

    assert isinstance(result, RenderFailed) and "larger than" in result.message
    assert len(rendered("liquid", "{% for i in (1..1000) %}0123456789{% endfor %}", "text")) == 10_000


@pytest.mark.skipif(not IMAGE_ON_THE_SANDBOXES_DISK, reason="no PNG under /usr on this machine")
def test_the_converter_reads_no_local_file():
    local = IMAGE_ON_THE_SANDBOXES_DISK[0]
    hostile = (f'<img src="file://{local}"><img src="{local}"><img src="file:///etc/passwd">'
               f'<link rel="stylesheet" href="file:///etc/passwd"><style>@import url(file://{local});</style><p>x</p>')
    inline = f'<img src="data:image/png;base64,{base64.b64encode(png()).decode()}">'

    assert images_in(rendered("liquid", hostile, "pdf")) == 0
    assert images_in(rendered("liquid", inline, "pdf")) == 1  # the control: an inline image is drawn


def test_the_converter_fetches_no_url(web_server):
    template = (f'<html><head><link rel="stylesheet" href="{web_server}/a.css">'
                f'<style>@import url({web_server}/b.css);'
                f' @font-face {{ font-family: x; src: url({web_server}/f.ttf); }}'
                f'</style></head><body><img src="{web_server}/c.png"><a href="{web_server}/d">link</a></body></html>')

    pdf = rendered("liquid", template, "pdf")

    assert _Counting.hits == [] and images_in(pdf) == 0
    assert "link" in "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def test_page_size_orientation_and_margins_are_honoured():
    def box(page: dict[str, object]) -> tuple[int, int]:
        result = rendering.render("liquid", "<p>page</p>", DATA, "pdf", page=page, limits=SHORT)
        assert isinstance(result, Rendered)
        media = PdfReader(io.BytesIO(result.content)).pages[0].mediabox
        return round(float(media.width)), round(float(media.height))

    def text_origin(margin: str) -> tuple[int, int]:
        result = rendering.render("liquid", "<p>page</p>", DATA, "pdf", limits=SHORT,
                                  page={"pageSize": "A4", "portrait": True, "margin": margin})
        assert isinstance(result, Rendered)
        found: list[tuple[int, int]] = []

        def visit(text: str, cm: list[float], tm: list[float], *_: object) -> None:
            if text.strip():
                found.append((round(cm[4] + tm[4]), round(cm[5] + tm[5])))

        PdfReader(io.BytesIO(result.content)).pages[0].extract_text(visitor_text=visit)
        return found[0]

    assert box({"pageSize": "A4", "portrait": True, "margin": "10mm 10mm 10mm 10mm"}) == (595, 842)
    assert box({"pageSize": "A4", "portrait": False}) == (842, 595)
    assert box({"pageSize": "letter", "portrait": True}) == (612, 792)
    assert text_origin("10mm 10mm 10mm 10mm")[0] == 28  # 10 mm is 28.3 points from the left edge
    assert text_origin("50mm 50mm 50mm 50mm")[0] == 142


def test_the_converter_reads_the_custom_fonts_it_is_given_and_no_other_font_file():
    import reportlab

    fonts = os.path.join(os.path.dirname(reportlab.__file__), "fonts")
    with open(os.path.join(fonts, "Vera.ttf"), "rb") as vera:
        given = {"Brand": vera.read()}
    template = ('<style>@font-face { font-family: Bold; src: url("/libs/reportlab/fonts/VeraBd.ttf"); }'
                ' @font-face { font-family: Other; src: url("/sandbox/plugins/fonts/../fonts/Brand.ttf"); }</style>'
                '<p style="font-family: Bold">b</p><p style="font-family: Other">o</p>'
                '<p style="font-family: Brand">x</p>')

    result = rendering.render("liquid", template, DATA, "pdf", fonts=given, limits=SHORT)

    assert isinstance(result, Rendered), result
    embedded = sorted(str(font["/BaseFont"]) for page in PdfReader(io.BytesIO(result.content)).pages
                      for font in page["/Resources"]["/Font"].values())
    assert embedded == ["/AAAAAA+BitstreamVeraSans-Roman", "/Helvetica"]  # Brand alone, not VeraBd
