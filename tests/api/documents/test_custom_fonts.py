"""Custom fonts (`customFonts` of a document or of the tenant) are the package's `fonts/<Name>.ttf`, put
read-only on the renderer's disk and embedded in the PDF by their @font-face family; a font the package
lacks lands the document in conversionError."""

from __future__ import annotations

import io
from pathlib import Path
from typing import cast

import reportlab
from pypdf import PdfReader
from pypdf.generic import DictionaryObject

from tests.api.documents.support import QUOTATION, documents_model, download, listed
from tests.api.quotes.support import advance, auto, create, new_account
from tests.support.api import ok
from tests.support.configs import (
    BASE_RATES_CSV,
    QUOTE_PLUGINS,
    VALUE_BANDS_CSV,
    deployed_tenant,
    package_with_files,
    upload_table,
)

VERA = (Path(reportlab.__file__).parent / "fonts" / "Vera.ttf").read_bytes()
VERA_FACE = "BitstreamVeraSans-Roman"
"""The PostScript name of Vera.ttf, which the PDF's font resource carries (after a subset tag)."""
PDF_AT_PRICE = {
    "format": "pdf",
    "rendering": "dynamic",
    "scope": "policy",
    "trigger": "priced",
    "selectionTimeBasis": "currentTime",
}
LETTER = '<html><body><p style="font-family: Brand">Dear {{ account.data.firstName }}</p></body></html>'
PLAIN = "<html><body><p>Plain {{ account.data.firstName }}</p></body></html>"


def priced(api, token, model, files: dict[str, bytes]) -> tuple[str, dict[str, dict]]:
    package = package_with_files(
        model,
        {
            "plugins/python/auto.py": QUOTE_PLUGINS.encode(),
            "documents/Quotation/template.liquid": QUOTATION.encode(),
            **files,
        },
    )
    tenant = deployed_tenant(api, token, package)
    upload_table(api, token, tenant, "tables", "BaseRates", BASE_RATES_CSV)
    upload_table(api, token, tenant, "rangeTables", "ValueBands", VALUE_BANDS_CSV)
    quote = create(api, token, tenant, auto(new_account(api, token, tenant)))
    assert ok(advance(api, token, tenant, quote["locator"], "price"))["quoteState"] == "priced"
    return tenant, quote["locator"]


def font_names(pdf: bytes) -> list[str]:
    names: list[str] = []
    for page in PdfReader(io.BytesIO(pdf)).pages:
        fonts = cast(DictionaryObject, cast(DictionaryObject, page["/Resources"])["/Font"])
        names.extend(str(font["/BaseFont"]) for font in fonts.values())
    return sorted(names)


def test_a_documents_custom_font_is_embedded_in_its_pdf(api, admin_token, jobs):
    model = documents_model(Letter={**PDF_AT_PRICE, "customFonts": ["Brand"]}, Plain=PDF_AT_PRICE)
    tenant, quote = priced(
        api,
        admin_token,
        model,
        {
            "fonts/Brand.ttf": VERA,
            "documents/Letter/template.liquid": LETTER.encode(),
            "documents/Plain/template.liquid": PLAIN.encode(),
        },
    )
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote)}
    assert by_name["Letter"]["documentInstanceState"] == by_name["Plain"]["documentInstanceState"] == "ready"
    letter = font_names(download(api, admin_token, tenant, by_name["Letter"]["locator"]).body)
    assert letter == [f"/AAAAAA+{VERA_FACE}", "/Helvetica"]  # the package font, subset
    assert font_names(download(api, admin_token, tenant, by_name["Plain"]["locator"]).body) == ["/Helvetica"]


def test_the_tenants_fonts_serve_every_pdf_and_a_missing_file_is_a_conversion_error(api, admin_token, jobs):
    model = documents_model(Letter=PDF_AT_PRICE, Other={**PDF_AT_PRICE, "customFonts": ["Absent"]})
    model["customFonts"] = ["Brand"]
    tenant, quote = priced(
        api,
        admin_token,
        model,
        {
            "fonts/Brand.ttf": VERA,
            "documents/Letter/template.liquid": LETTER.encode(),
            "documents/Other/template.liquid": LETTER.encode(),
        },
    )
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote)}
    letter = font_names(download(api, admin_token, tenant, by_name["Letter"]["locator"]).body)
    assert letter == [f"/AAAAAA+{VERA_FACE}", "/Helvetica"]
    other = by_name["Other"]
    assert other["documentInstanceState"] == "conversionError"
    assert other["processingErrors"] == "the package has no font file for Absent (fonts/<Name>.ttf)"
