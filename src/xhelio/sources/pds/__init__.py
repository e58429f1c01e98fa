"""NASA's PDS Planetary Plasma Interactions archive as a data source (registered as "pds").

`source.PdsSource` is the entry point; `catalog` reads the catalog xhelio-pds ships,
`archive` finds and downloads products, `products` reads them with pdr.
"""

from xhelio.sources.pds.source import PdsSource

__all__ = ["PdsSource"]
