"""The LangChain retrievers: `SummaryRetriever` over an open `Synopsis` (`in_process`) and
`HttpSummaryRetriever` over a running service's `POST /search` (`http`); both make a hit's
Document the same way (`documents`).

This module imports nothing, so importing the HTTP retriever loads neither Weaviate nor
the server.
"""
