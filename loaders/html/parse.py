"""Reading a page: lxml flattens the markup inside code blocks, then BeautifulSoup
builds the tree."""

from __future__ import annotations

import warnings

import lxml.html
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from lxml import etree

_LXML_PARSER = lxml.html.HTMLParser(huge_tree=True)


def _flatten_code(html: str) -> str:
    """`html` with the markup inside every `<pre>` replaced by its text.

    Syntax highlighting wraps every token of a code block in a `<span>`, and building
    BeautifulSoup's tree costs ~50 µs per element, while the code's text is all we
    keep of it. lxml reads and writes the page ~50 times faster than BeautifulSoup
    builds it, so the page is passed through it first. The first `<code>` inside a
    `<pre>` keeps its class (the language). A page lxml cannot read is left as it is.
    """
    try:
        root = lxml.html.document_fromstring(html, parser=_LXML_PARSER)
    except (etree.ParserError, ValueError):
        return html
    changed = False
    for pre in root.iter("pre"):
        if len(pre) == 0 or any(parent.tag == "pre" for parent in pre.iterancestors()):
            continue
        code = next(pre.iter("code"), None)
        language = code.get("class") if code is not None else None
        text = pre.text_content()
        for child in list(pre):
            pre.remove(child)
        if language:
            pre.text = None
            holder = etree.SubElement(pre, "code")
            holder.set("class", language)
            holder.text = text
        else:
            pre.text = text
        changed = True
    return lxml.html.tostring(root, encoding="unicode") if changed else html


def _parse(html: str) -> BeautifulSoup:
    html = _flatten_code(html)
    with warnings.catch_warnings():
        # An XHTML page is still read as HTML, as browsers do.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        # Class attributes stay strings: splitting them into lists for every tag costs
        # more than the few look-ups here.
        return BeautifulSoup(html, "lxml", multi_valued_attributes=None)
