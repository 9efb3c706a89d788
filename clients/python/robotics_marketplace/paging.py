"""Lists as iterators: ``for model in client.models.list(): ...`` walks every page (spec part 2:
``items``, ``next_cursor``, ``has_more``; the next page is asked for with ``cursor``)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional


class Page:
    def __init__(self, body: Mapping[str, Any]):
        self.body = body
        self.items: List[Dict[str, Any]] = list(body.get("items") or [])
        self.next_cursor: Optional[str] = body.get("next_cursor")
        self.has_more: bool = bool(body.get("has_more"))


class ListIterator:
    """Pages asked for lazily, as the iteration reaches them; ``first_page`` and ``pages()`` for
    callers that want the envelope (a ledger's ``summary``, say)."""

    def __init__(self, fetch: Callable[[Mapping[str, Any]], Mapping[str, Any]], params: Mapping[str, Any]):
        self._fetch = fetch
        self._params = {k: v for k, v in params.items() if v is not None}
        self._first: Optional[Page] = None

    @property
    def first_page(self) -> Page:
        if self._first is None:
            self._first = Page(self._fetch(self._params))
        return self._first

    def pages(self) -> Iterator[Page]:
        page = self.first_page
        while True:
            yield page
            if not page.has_more or not page.next_cursor:
                return
            page = Page(self._fetch({**self._params, "cursor": page.next_cursor}))

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for page in self.pages():
            yield from page.items
