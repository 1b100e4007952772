"""PDFs generated with pymupdf for the loader tests."""

from __future__ import annotations

import pymupdf

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
