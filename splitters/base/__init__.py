"""The base that `splitters` and `loaders` share, and the only part of `splitters` that
`loaders` import.

* ``splitters.base.errors``: `SynopsisError` and the errors both libraries raise or catch
  (`service.errors` re-exports them with the rest of the one hierarchy).
* ``splitters.base.metadata``: the metadata keys of a document and its chunks that the
  splitters write or read (header path, chunk index, PDF pages and their marker lines).
* ``splitters.base.markdown_syntax``: the Markdown syntax (fences, ATX headers) every
  package of Synopsis reads and writes.
* ``splitters.base.blocks``: Markdown as blocks (text, fenced code, headers).

Why inside `splitters`: the top level of the repository is fixed (`service/`, `loaders/`,
`splitters/`, `tests/`, `notebooks/`), so there is no room for a fourth package. This one
imports nothing of `splitters` outside it, nor `loaders` or `service`, so loaders and the
rest of splitters are siblings that meet only here (tests/test_imports.py checks it).
Importing it is light: no LangChain, no tokenizer.
"""
