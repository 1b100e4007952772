"""What a multipart upload to `POST /documents` carries: its files and the version label of
their chunks (`service.api.document_create.uploaded_files`, behind a bare route: the job
queue that takes them is tested on the real stack, tests/service/api/test_api_jobs.py)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar, Request, post
from litestar.testing import TestClient

from service.api.document_create import uploaded_files
from service.settings import Settings


@post("/upload")
async def _upload(request: Request[Any, Any, Any]) -> dict[str, Any]:
    files, version = await uploaded_files(request, Settings())
    return {"files": [(f.source, f.content_type) for f in files], "version": version}


def _post(data: dict[str, Any]) -> Any:
    with TestClient(Litestar([_upload])) as client:
        return client.post("/upload", files={"files": ("a.md", b"# A\n\nText.")}, data=data)


@pytest.mark.parametrize(("data", "version"), [({}, ""), ({"version": "3.12"}, "3.12")])
def test_an_upload_may_carry_a_version(data: dict[str, Any], version: str) -> None:
    response = _post(data)
    assert response.status_code == 201, response.text
    assert response.json() == {"files": [["a.md", "text/markdown"]], "version": version}


@pytest.mark.parametrize("data", [{"version": "3 12"}, {"version": "*"}, {"version": ["1", "2"]}])
def test_a_version_that_cannot_label_one_is_refused(data: dict[str, Any]) -> None:
    response = _post(data)
    assert response.status_code == 400, response.text
    assert "version" in response.text
