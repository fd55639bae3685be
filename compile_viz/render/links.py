"""How render functions make a link to a page: they are handed one, never write a path.

`link(page, **params) -> str` returns the URL that opens that page ("viewer", "compiles",
"compare", …) with those query parameters; the dashboard passes ui.page_registry.page_url, which
knows which page the app's root serves. A render function that wrote "/viewer?…" itself would
link to a path the default page is not served at ("Page not found").
"""

from __future__ import annotations

from collections.abc import Callable

PageLink = Callable[..., str]
