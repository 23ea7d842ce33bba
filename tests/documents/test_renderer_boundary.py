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
from decimal import Decimal

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
    walks = [
        "$account.__class__",
        "$account.__class__.__mro__",
        "$account.data.__class__.__subclasses__()",
        "$items.__class__.__base__.__subclasses__()",
        "$account.__init__.__globals__",
        "$account._private",
    ]
    text = rendered("velocity", " | ".join(walks)).decode()

    assert text == " | ".join(walks)  # unresolved names render as written, and nothing else
    assert rendered("velocity", "$account.data.firstName has $items.size() items") == b"Ada has 3 items"


# Every route from a value to Python that a template could try: each renders as written (a name Velocity
# does not resolve stays in the text, as in Java's engine) or fails, and shows nothing of Python.
VELOCITY_ROUTES_TO_PYTHON = {
    "str.format": ("#set($f='{0.__class__.__mro__}')$f.format($account)", "$f.format($account)"),
    "str.format_map": ("#set($f='{__class__}')$f.format_map($account)", "$f.format_map($account)"),
    "str.join of objects": ("#set($s=', ')$s.join($items)", "$s.join($items)"),
    "dict.get of a dunder key": (
        "$account.get('__class__') $account.get('__init__')",
        "$account.get('__class__') $account.get('__init__')",
    ),
    "Python's dict methods": (
        "$account.items() $account.keys() $account.setdefault('x', 1) $account.pop('data')",
        "$account.items() $account.keys() $account.setdefault('x', 1) $account.pop('data')",
    ),
    "mro": ("$account.mro() $items.mro", "$account.mro() $items.mro"),
    "a method object's attributes": (
        "$items.size.__self__ $items.index.__self__.__class__",
        "$items.size.__self__ $items.index.__self__.__class__",
    ),
    "__getattribute__": (
        "$account.__getattribute__('__class__') $account.data.firstName.__getattribute__('upper')",
        "$account.__getattribute__('__class__') $account.data.firstName.__getattribute__('upper')",
    ),
    "Java's getClass": (
        "$account.getClass() $account.class.name $items.getClass().forName('os')",
        "$account.getClass() $account.class.name $items.getClass().forName('os')",
    ),
    "a Java method's answer walked on": (
        "$account.data.firstName.toUpperCase().format($account)",
        "$account.data.firstName.toUpperCase().format($account)",
    ),
    "#evaluate": (
        "#evaluate('$account.__class__')#evaluate(\"$items.__class__.__name__\")",
        "$account.__class__$items.__class__.__name__",
    ),
    "a #define block": (
        "#define($block)x#end$block.__class__ $block.format($account)",
        "$block.__class__ $block.format($account)",
    ),
    "the loop's variables": (
        "#foreach($i in $items)$foreach.getClass()$velocityCount.__class__#end",
        "$foreach.getClass()$velocityCount.__class__" * 3,
    ),
    "a method without its parentheses": (
        "#set($m = $items.size)$m $account.data.firstName.upper",
        "$m $account.data.firstName.upper",
    ),
}


@pytest.mark.parametrize(
    "template",
    [
        "#set($x = '%s' % $account)$x",
        "#set($x = '%(data)s' % $account)$x",
        "#set($x = '%r' % $items)$x",
        "#set($x = 'x' * 100000000)$x",
        "#set($x = $items * 3)$x",
        "#set($x = $items + $items)$x",
    ],
)
def test_velocity_operators_take_numbers_not_python_formatting(template):
    result = rendering.render("velocity", template, DATA, "text", limits=SHORT)

    assert isinstance(result, RenderFailed) and "is not a number" in result.message, result
    assert "<class" not in result.message and "0x" not in result.message


def test_velocity_renders_platform_templates_as_java_does():
    """`data` is the whole rendering data (a top-level key of that name does not hide it)."""
    data = {**DATA, "data": "shadowed", "amount": Decimal("12.345"), "flag": True, "start": "2026-02-01T05:00:00Z"}
    template = (
        "$data.account.data.firstName.toUpperCase() ${data.start.substring(0, 10)} $${data.amount} "
        "$amount.setScale(2, 4) $flag $items $account #set($r = -7 % 3)$r #set($q = -7 / 2)$q "
        "#foreach($v in $account.data)$v#end $items.get(1) $account.data.keySet() "
        "$account.data.firstName.length()"
    )
    result = rendering.render("velocity", template, data, "text", limits=SHORT)

    assert isinstance(result, Rendered), result
    assert result.content.decode() == (
        "ADA 2026-02-01 $12.345 12.35 true [1, 2, 3] {data={firstName=Ada}} -1 -3 Ada 2 [firstName] 3"
    )


LIQUID_ROUTES_TO_PYTHON = {
    "attributes": (
        '{{ account.__class__ }}|{{ account["__class__"] }}|{{ account.data.firstName.__class__.__mro__ }}'
        "|{{ account.data.items }}|{{ account.data.get }}|{{ account.keys }}",
        "|||||",
    ),
    "the loop's drop": (
        '{% for i in items %}{{ forloop.__class__ }}{{ forloop["__init__"] }}'
        "{{ forloop.parentloop.__class__ }}{{ forloop.it }}{% endfor %}",
        "",
    ),
    "a range": ("{% assign r = (1..3) %}{{ r.__class__ }}{{ r.start }}{{ r.step }}", ""),
    "map over attributes": ('{{ account.data | map: "__class__" | join }}|{{ account | map: "__init__" }}', "|"),
    "sort over attributes": ('{{ items | sort: "__class__" | join: "," }}', None),
    "where over attributes": ('{{ items | where: "__class__" }}', None),
    "a captured value": (
        "{% capture c %}{{ account.data.firstName }}{% endcapture %}{{ c.__class__ }}{{ c.upper }}",
        "",
    ),
}


ROUTES_TO_PYTHON = {
    **{("velocity", route): case for route, case in VELOCITY_ROUTES_TO_PYTHON.items()},
    **{("liquid", route): case for route, case in LIQUID_ROUTES_TO_PYTHON.items()},
}
"""Each template and what it renders (Velocity leaves what it does not resolve as written, Liquid renders it
empty), or None when the engine refuses it."""


@pytest.mark.parametrize("engine, route", ROUTES_TO_PYTHON)
def test_templates_reach_no_python_attribute_by_any_route(engine, route):
    template, expected = ROUTES_TO_PYTHON[engine, route]

    if expected is None:  # the engine refuses it
        result = rendering.render(engine, template, DATA, "text", limits=SHORT)
        assert isinstance(result, RenderFailed) and "<class" not in result.message, result
    else:
        assert rendered(engine, template, "text").decode() == expected


def test_the_routes_control_what_resolves():
    assert rendered("liquid", "{{ data.account.data.firstName }} {{ items | size }}", "text") == b"Ada 3"
    assert rendered("velocity", "$account.data.firstName.toUpperCase() $data.items.size()", "text") == b"ADA 3"


def test_templates_read_no_file_through_includes():
    for engine, template in (
        ("velocity", '#include("/etc/passwd")'),
        ("velocity", '#parse("/etc/hostname")'),
        ("liquid", "{% include '/etc/passwd' %}"),
        ("liquid", "{% render '../../etc/passwd' %}"),
    ):
        result = rendering.render(engine, template, DATA, "text", limits=SHORT)
        assert isinstance(result, RenderFailed) and result.stage == "render", (template, result)
        assert "root:" not in result.message


@pytest.mark.parametrize(
    "engine, template",
    [
        ("liquid", "{% for i in (1..1000000000) %}{% endfor %}"),
        ("velocity", "#foreach($i in [1..1000000000])#end"),
        ("velocity", "#macro(f)#f()#end#f()"),
    ],
)
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
    hostile = (
        f'<img src="file://{local}"><img src="{local}"><img src="file:///etc/passwd">'
        f'<link rel="stylesheet" href="file:///etc/passwd"><style>@import url(file://{local});</style><p>x</p>'
    )
    inline = f'<img src="data:image/png;base64,{base64.b64encode(png()).decode()}">'

    assert images_in(rendered("liquid", hostile, "pdf")) == 0
    assert images_in(rendered("liquid", inline, "pdf")) == 1  # the control: an inline image is drawn


def test_the_converter_fetches_no_url(web_server):
    template = (
        f'<html><head><link rel="stylesheet" href="{web_server}/a.css">'
        f"<style>@import url({web_server}/b.css);"
        f" @font-face {{ font-family: x; src: url({web_server}/f.ttf); }}"
        f'</style></head><body><img src="{web_server}/c.png"><a href="{web_server}/d">link</a></body></html>'
    )

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
        result = rendering.render(
            "liquid",
            "<p>page</p>",
            DATA,
            "pdf",
            limits=SHORT,
            page={"pageSize": "A4", "portrait": True, "margin": margin},
        )
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
    template = (
        '<style>@font-face { font-family: Bold; src: url("/libs/reportlab/fonts/VeraBd.ttf"); }'
        ' @font-face { font-family: Other; src: url("/sandbox/plugins/fonts/../fonts/Brand.ttf"); }</style>'
        '<p style="font-family: Bold">b</p><p style="font-family: Other">o</p>'
        '<p style="font-family: Brand">x</p>'
    )

    result = rendering.render("liquid", template, DATA, "pdf", fonts=given, limits=SHORT)

    assert isinstance(result, Rendered), result
    embedded = sorted(
        str(font["/BaseFont"])
        for page in PdfReader(io.BytesIO(result.content)).pages
        for font in page["/Resources"]["/Font"].values()
    )
    assert embedded == ["/AAAAAA+BitstreamVeraSans-Roman", "/Helvetica"]  # Brand alone, not VeraBd
