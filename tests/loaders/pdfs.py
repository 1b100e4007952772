"""PDFs generated for the loader tests (with pymupdf, or object by object)."""

from __future__ import annotations

import pymupdf

from tests.loaders.bombs import pdf_file, pdf_stream

CODE = ["def greet(name):", '    """Say hello."""', "    return f'hi {name}'"]


def sample_pdf() -> bytes:
    """Two pages: headers (in the outline too), body text, a monospace code block, an image."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Gadget Manual", fontsize=24, fontname="helv")
    page.insert_text((72, 120), "Gadget turns widgets into gadgets.", fontsize=11, fontname="helv")
    page.insert_text((72, 160), "Installation", fontsize=16, fontname="helv")
    page.insert_text((72, 190), "Run the installer and then the greeting:", fontsize=11)
    y = 215.0
    for line in CODE:
        page.insert_text((72, y), line, fontsize=10, fontname="cour")
        y += 13
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8), False)
    pixmap.set_rect(pixmap.irect, (200, 30, 30))
    page.insert_image(pymupdf.Rect(72, 300, 136, 364), pixmap=pixmap)
    second = doc.new_page()
    second.insert_text((72, 80), "Usage", fontsize=16, fontname="helv")
    second.insert_text((72, 110), "Call greet with a name.", fontsize=11, fontname="helv")
    doc.set_toc([[1, "Gadget Manual", 1], [2, "Installation", 1], [2, "Usage", 2]])
    data = doc.tobytes()
    doc.close()
    return data


def encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret", fontsize=11)
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    doc.close()
    return data


def empty_page_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page()
    data = doc.tobytes()
    doc.close()
    return data


def text_pages_pdf(pages: int, lines: int) -> bytes:
    """`pages` pages, each a header and `lines` lines of body text, written object by
    object (pymupdf's `new_page` is quadratic in the page count)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, once the pages' numbers are known
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(1, pages + 1):
        text = [f"BT /F1 20 Tf 72 740 Td (Chapter {number}) Tj ET"]
        text += [
            f"BT /F1 10 Tf 72 {720 - 16 * line} Td (Line {line} of page {number}, with"
            " some words of body text to read.) Tj ET"
            for line in range(lines)
        ]
        objects.append(pdf_stream("\n".join(text).encode()))
        kids.append(len(objects) + 1)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>" % len(objects)
        )
    objects[1] = b"<< /Type /Pages /Count %d /Kids [%b] >>" % (
        pages,
        b" ".join(b"%d 0 R" % kid for kid in kids),
    )
    return pdf_file(objects)
