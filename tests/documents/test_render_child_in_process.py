"""The renderer's logic (documents/render_child.py `run`, the request the sandboxed process reads) called in this
process: a Velocity template computes as Java's engine would over plain data, a Liquid template and its snippets
render, a PDF comes out, and each failure is reported by its stage. The process (its limits, its seccomp filter, its
channel) runs only as a script in the sandbox: tests/documents/test_renderer_boundary.py. What the renderer patches
into airspeed and xhtml2pdf for its one render (the Java methods, the converter's fetch-nothing policy) is put back
after each test, so the rest of this process sees the libraries as they are."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.documents import render_child

LIMITS = {"max_output_bytes": 100_000, "memory_bytes": 0, "cpu_seconds": 0, "max_open_files": 0, "max_file_bytes": 0}
DATA = {
    "name": "Ada Lovelace",
    "premium": Decimal("1200.105"),
    "count": 7,
    "ratio": 0.5,
    "flag": True,
    "items": [{"n": 1, "tags": ["a", "b"]}, {"n": 2, "tags": "c"}, "plain"],
    "account": {"data": {"state": "NY"}, "id": "A1"},
}


@pytest.fixture(autouse=True)
def libraries_put_back(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import airspeed  # type: ignore[import-untyped]
    from xhtml2pdf import files  # type: ignore[import-untyped]

    for owner, name in [
        (airspeed.NameOrCall, "calculate"),
        (airspeed.SubExpression, "calculate"),
        (airspeed.FormalReference, "evaluate_raw"),
        (airspeed.ForeachDirective, "evaluate_raw"),
        (airspeed.Text, "PLAIN"),
        (files.FileNetworkManager, "get_manager"),
    ]:
        monkeypatch.setattr(owner, name, owner.__dict__[name])
    monkeypatch.setattr(airspeed.BinaryOperator, "OPERATORS", dict(airspeed.BinaryOperator.OPERATORS))
    monkeypatch.setattr(airspeed, "__additional_methods__", dict(airspeed.__additional_methods__))
    yield


def rendered(engine: str, template: str, output: str = "text", **request: Any) -> dict[str, Any]:
    return render_child.run(
        {"engine": engine, "template": template, "data": DATA, "format": output, "limits": LIMITS, **request}
    )


def failure(engine: str, template: str, output: str = "text", **request: Any) -> tuple[str, str]:
    with pytest.raises(render_child.Failed) as failed:
        rendered(engine, template, output, **request)
    return failed.value.stage, failed.value.message


VELOCITY = {
    # names: map keys only, over lists the entries of their maps; `data` is the whole rendering data
    "$name $data.count $account.data.state $account.missing $!account.missing|": "Ada Lovelace 7 NY $account.missing |",
    "$items.n $items.tags $name.length $items[1].n $items[9] $account['id'] $name[0] $name.x": (
        "[1, 2] [a, b, c] $name.length 2 $items[9] A1 A $name.x"
    ),
    "$account.data['state'] $items.tags[1] $account.data.state[0] $items[0].tags[1] $count[0]": "NY b N b $count[0]",
    "${missing|'fallback'} $!{missing|$name}": "fallback Ada Lovelace",
    "$_private $account._id $$name $flag $account": (
        "$_private $account._id $Ada Lovelace true {data={state=NY}, id=A1}"
    ),
    "#foreach($i in $items)$velocityCount:$foreach.index:$foreach.first:$foreach.last:$velocityHasNext #end": (
        "1:0:true:false:true 2:1:false:false:true 3:2:false:true:false "
    ),
    "#foreach($v in $account)$v;#end#foreach($v in $nothing)x#end": "{state=NY};A1;",
    # Java's arithmetic: % and / truncate toward zero on whole numbers, + joins text
    "#set($a = -7 % 3)$a #set($b = 7 % -3)$b #set($c = -7 / 2)$c #set($d = 7 / 2)$d #set($e = 7.5 % 2)$e": (
        "-1 1 -3 3 1.5"
    ),
    "#set($f = 1 / 4.0)$f #set($g = $count * 2 - 1)$g #set($h = $name + 1)$h #set($i = 1 + $ratio)$i": (
        "0.25 13 Ada Lovelace1 1.5"
    ),
    # String
    "$name.toUpperCase() $name.toLowerCase() $name.substring(4) $name.substring(0, 3) $name.charAt(1)": (
        "ADA LOVELACE ada lovelace Lovelace Ada d"
    ),
    "$name.indexOf('a') $name.indexOf('a', 3) $name.lastIndexOf('a') $name.contains('Love') $name.isEmpty()": (
        "2 9 9 true false"
    ),
    "$name.startsWith('Ada') $name.endsWith('x') $name.equals('Ada Lovelace') $name.equalsIgnoreCase('ADA LOVELACE')": (
        "true false true true"
    ),
    "$name.compareTo('B') $name.compareTo('Ada Lovelace') $name.concat('!') $name.replace('a', 'o') $name.isBlank()": (
        "-1 0 Ada Lovelace! Ado Loveloce false"
    ),
    "$name.replaceAll('([A-Za-z]+) ([A-Za-z]+)', '$2, $1') $name.replaceFirst('a', '4') $name.split(' ')": (
        "Lovelace, Ada Ad4 Lovelace [Ada, Lovelace]"
    ),
    "$name.matches('A.*e') #set($s = '  x  ')[$s.trim()][$s.strip()] $name.length() $name.format('%s')": (
        "true [x][x] 12 $name.format('%s')"
    ),
    # List
    "$items.size() $items.isEmpty() $items.get(2) $items.contains('plain') $items.indexOf('plain') $items.indexOf(1)": (
        "3 false plain true 2 -1"
    ),
    "#set($l = [1, 2, 3])#set($ok = $l.add(4))$ok $l.set(0, 9) $l $l.subList(1, 3)": ("true 1 [9, 2, 3, 4] [2, 3]"),
    # Map
    "$account.size() $account.isEmpty() $account.get('id') $account.containsKey('id') $account.containsValue('A1')": (
        "2 false A1 true true"
    ),
    "$account.keySet() $account.values() #foreach($e in $account.entrySet())$e.key=$e.value #end": (
        "[data, id] [{state=NY}, A1] data={state=NY} id=A1 "
    ),
    "#set($m = {'a': 1})$m.put('a', 2) $m.put('b', 3) $m.putAll({'c': 4}) $m $m.remove('a') $m.remove([1]) $m": (
        "1 $m.put('b', 3) $m.putAll({'c': 4}) {a=2, b=3, c=4} 2 $m.remove([1]) {b=3, c=4}"
    ),
    # Number and Boolean
    "$premium.setScale(2, 4) $premium.setScale(2, 'HALF_EVEN') $premium.setScale(1, 1) $premium.setScale(3)": (
        "1200.11 1200.10 1200.1 1200.105"
    ),
    "$count.intValue() $premium.longValue() $count.compareTo(8) $count.add(1) $count.subtract(10) $count.multiply(2)": (
        "7 1200 -1 8 -3 14"
    ),
    "$count.divide(2) $count.negate() $count.negate().abs() $count.negate().signum() $premium.toPlainString()": (
        "3 -7 7 -1 1200.105"
    ),
    "$flag.booleanValue() $flag.toString() $ratio.multiply(3) $count.equals(7) $count.hashCode()": (
        "true true 1.5 true $count.hashCode()"
    ),
    # a #define'd block called as a macro, snippets by #parse and #include
    "#define($hello)Hi $name#end$hello $hello() #parse('part') #include('part')": (
        "Hi Ada Lovelace Hi Ada Lovelace 7 $count"
    ),
}


@pytest.mark.parametrize("template", list(VELOCITY))
def test_velocity_computes_over_plain_data_as_java_does(template):
    assert rendered("velocity", template, snippets={"part": "$count"}) == {"text": VELOCITY[template]}


VELOCITY_FAILURES = {
    "$name.substring(5, 2)": "IndexError: substring(5, 2) of a String of length 12",
    "$items.get(7)": "IndexError: index 7 of a List of size 3",
    "$items.get(-1)": "IndexError: index -1 of a List of size 3",
    "$items.subList(2, 9)": "IndexError: subList(2, 9) of a List of size 3",
    "$name.substring('1')": "TypeError: String.substring(1 arguments): a String is not an integer",
    "$name.contains(1)": "TypeError: String.contains(1 arguments): a Number is not a String",
    "$name.contains($nothing)": "TypeError: String.contains(1 arguments): a null is not a String",
    "$account.putAll([1])": "TypeError: Map.putAll(1 arguments): a List is not a Map",
    "#set($x = $flag * 2)$x": "TypeError: a Boolean is not a number",
    "#set($x = $account - 1)$x": "TypeError: a Map is not a number",
    "$premium.setScale(2)": "ArithmeticError: Rounding necessary",
    "$premium.setScale(2, 9)": "ValueError: no rounding mode 9",
    "#foreach($c in $name)$c#end": "ValueError: #foreach needs a list or a map, not String",
    "#parse('nowhere')": "Failed: no template snippet named 'nowhere'",
    "#include('nowhere')": "Failed: no template snippet named 'nowhere'",
    "#macro(f)#f()#end#f()": "RecursionError: maximum recursion depth exceeded while calling a Python object",
}


@pytest.mark.parametrize("template", list(VELOCITY_FAILURES))
def test_a_velocity_template_that_fails_is_reported_at_the_render_stage(template):
    stage, message = failure("velocity", template)
    assert stage == "render" and message.startswith("TemplateExecutionError: Error in template '<string>' at position")
    assert message.endswith("\n" + VELOCITY_FAILURES[template])


def test_liquid_renders_the_data_and_its_snippets():
    assert rendered(
        "liquid",
        "{{ data.name }}/{{ name }}: {% for i in items %}{{ i.n }}{% endfor %} {% include 'part' %}",
        "html",
        snippets={"part": "{{ count | plus: 1 }}"},
    ) == {"text": "Ada Lovelace/Ada Lovelace: 12 8"}


def test_each_failure_names_its_stage():
    stage, message = failure("liquid", "{% for %}")
    assert stage == "render" and message.startswith("LiquidSyntaxError: missing expression\n  -> '{% for %}' 1:3")
    small = {**LIMITS, "max_output_bytes": 20}
    assert failure("liquid", "{{ name }}{{ name }}", limits=small) == (
        "render",
        "the rendered text is larger than 20 bytes",
    )
    assert failure("liquid", "<p>{{ count }}</p>", "pdf", limits=small) == (
        "conversion",
        "the PDF is larger than 20 bytes",
    )


def test_a_pdf_is_produced_with_the_page_and_fonts_asked_for():
    import io

    from pypdf import PdfReader

    answer = rendered(
        "liquid",
        '<p style="font-family: Body">{{ name }}</p><img src="http://198.51.100.1/x.png"><img src="data:,x">',
        "pdf",
        page={"pageSize": "a4", "portrait": False, "margin": "1in"},
        fonts={"Body": "/nowhere/body.ttf"},
    )
    pdf = PdfReader(io.BytesIO(base64.b64decode(answer["pdf"])))
    assert "Ada Lovelace" in pdf.pages[0].extract_text()
    width, height = pdf.pages[0].mediabox.width, pdf.pages[0].mediabox.height
    assert (round(width), round(height)) == (842, 595)  # A4 landscape in points
    assert render_child.page_style({}) == "<style>@page { size: letter portrait; margin: 0.75in; }</style>"
    assert render_child.font_faces({}) == ""


def test_the_process_helpers_refuse_a_malformed_filter_and_set_the_limits_asked_for(monkeypatch):
    import resource

    for program in (b"", b"123456789"):
        with pytest.raises(SystemExit, match="the renderer got a malformed seccomp program"):
            render_child.install_seccomp(program)
    render_child.drop_privileges([])  # no uid/gid given (no sandbox on this machine): the user it was started as
    render_child.preload()  # the engines and the converter import before any tenant input is read
    set_to: dict[int, tuple[int, int]] = {}
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: set_to.__setitem__(which, limits))
    render_child.apply_limits({"memory_bytes": 1 << 30, "cpu_seconds": 3, "max_open_files": 64, "max_file_bytes": 0})
    assert set_to == {
        resource.RLIMIT_AS: (1 << 30, 1 << 30),
        resource.RLIMIT_CPU: (3, 4),
        resource.RLIMIT_NOFILE: (64, 64),
        resource.RLIMIT_FSIZE: (0, 0),
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NPROC: (0, 0),
    }
