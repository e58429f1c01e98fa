"""Documented web APIs and pluggable web and literature search, behind a host allowlist.

NOAA SWPC, NASA DONKI and the user's OpenAPI/HAPI services are described as data. See
docs/apis.md. Sits above `sources` (it reuses its HTTP plumbing) and below `data`.
"""

from xhelio.webapis.access import SearchOffError, WebAccess, open_web
from xhelio.webapis.guard import BlockedAddressError
from xhelio.webapis.schema import SchemaDriftError
from xhelio.webapis.search import SearchHit, SearchProvider
from xhelio.webapis.service import ApiTable, WebApis

__all__ = [
    "ApiTable",
    "BlockedAddressError",
    "SchemaDriftError",
    "SearchHit",
    "SearchOffError",
    "SearchProvider",
    "WebAccess",
    "WebApis",
    "open_web",
]
