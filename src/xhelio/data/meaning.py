"""What data means beyond its numbers: display units, scaled indices, citations, log scales.

- `display_units` turns the unit strings archives write (``Km/s``, ``Per cc``, IDL
  codes like ``cm!E-2!N``) into one readable form (``km/s``, ``cm^-3``, ``cm^-2``); the
  raw string is always kept beside it in the entry's metadata.
- `scale_factor` finds indices stored multiplied (OMNI's ``Kp*10``) so axes say so.
- `citation_for` builds the citation every fetched entry records: dataset, DOI, PI, the
  provider that served it (named by the source's `cite`) and the provider's
  acknowledgement.
- `prefers_log_colour` decides from units and name whether values span decades
  (fluxes, counts, spectral densities), which a linear colour scale would flatten.

Imports nothing from xhelio.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "citation_for",
    "citation_text",
    "display_units",
    "html_units",
    "prefers_log_colour",
    "scale_factor",
]

# IDL/ISTP text codes: !E or !U superscript, !D or !I subscript, !N back to normal.
_IDL_SUPER = re.compile(r"!(?:E|U|e|u)(.*?)(?:!(?:N|n)|$)")
_IDL_SUB = re.compile(r"!(?:D|I|d|i)(.*?)(?:!(?:N|n)|$)")
_IDL_OTHER = re.compile(r"!\w")
_PER_CC = re.compile(
    r"^(?:per\s*cc|#\s*/\s*cc|n\s*/\s*cc|/\s*cc|1\s*/\s*cc|ions\s*/\s*cc|#\s*/\s*cm\^?3|"
    r"/\s*cm\^?3|1\s*/\s*cm\^?3|cm\^?-3|cm\*\*-3|particles\s*/\s*cc|cm\^\{-3\})$",
    re.IGNORECASE,
)
_SPEED = re.compile(r"^(?:km\s*/\s*s(?:ec)?|km\s+per\s+sec(?:ond)?|km\s*s\^?-1)$", re.IGNORECASE)
_WORDS: dict[str, str] = {
    "nanotesla": "nT",
    "nanotesla (nt)": "nT",
    "degrees": "deg",
    "degree": "deg",
    "kelvin": "K",
    "deg k": "K",
    "sec": "s",
    "seconds": "s",
    "km": "km",
    "re": "R_E",
}
# Placeholders ISTP files write where a quantity has no unit: shown as no unit at all,
# never as "(None)" on an axis. The raw text stays in the metadata.
_NO_UNIT = frozenset({"none", "na", "n/a", "n.a.", "null", "unitless", "dimensionless", "-", " "})


def display_units(raw: str) -> str:
    """A readable unit string: ``Km/s`` -> ``km/s``, ``Per cc`` -> ``cm^-3``, IDL codes decoded."""
    text = (raw or "").strip()
    if not text or text.lower() in _NO_UNIT:
        return ""
    text = _IDL_SUPER.sub(lambda m: "^" + _group(m.group(1)) + " ", text)
    text = _IDL_SUB.sub(lambda m: "_" + _group(m.group(1)) + " ", text)
    text = _IDL_OTHER.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([)/\]])", r"\1", text)
    if _PER_CC.match(text.replace(" ", "") if "per" not in text.lower() else text):
        return "cm^-3"
    if _SPEED.match(text):
        return "km/s"
    word = _WORDS.get(text.lower())
    if word is not None:
        return word
    # "Km" and "KM" mean kilometres; "nT", "MeV" and "keV" keep their case.
    text = re.sub(r"\bK[Mm](?=\b|/|\^)", "km", text)
    text = re.sub(r"\bsec\b", "s", text)
    return text


def _group(inner: str) -> str:
    inner = inner.strip()
    return inner if re.fullmatch(r"[-+]?\w+", inner) else "{" + inner + "}"


def html_units(units: str) -> str:
    """Units for a plotly title: ``cm^-3`` -> ``cm<sup>-3</sup>``, ``R_E`` -> ``R<sub>E</sub>``."""
    text = re.sub(r"\^\{([^}]*)\}", r"<sup>\1</sup>", units)
    text = re.sub(r"\^([-+]?[\w.]+)", r"<sup>\1</sup>", text)
    text = re.sub(r"_\{([^}]*)\}", r"<sub>\1</sub>", text)
    return re.sub(r"_([A-Za-z0-9]+)", r"<sub>\1</sub>", text)


_SCALED = re.compile(r"(?:\*|\bx|\btimes\s*)\s*(10|100|1000)\b", re.IGNORECASE)


def scale_factor(name: str, description: str, units: str = "") -> int | None:
    """The factor an index is stored multiplied by (OMNI ``Kp*10`` -> 10), or None."""
    for text in (description, units):
        match = _SCALED.search(text or "")
        if match and re.search(r"\bkp\b|\bindex\b|\bap\b|\bf10", f"{name} {text}", re.I):
            return int(match.group(1))
    return None


def citation_for(
    dataset_id: str,
    doi: str | None = None,
    pi: str | None = None,
    title: str = "",
    resource_url: str | None = None,
    *,
    provider: str = "",
    provider_url: str = "",
    acknowledgement: str = "",
) -> dict[str, str]:
    """The citation recorded with fetched data: dataset, DOI, PI, provider, acknowledgement."""
    citation = {"dataset": dataset_id}
    if provider:
        citation["provider"] = provider
    if provider_url:
        citation["provider_url"] = provider_url
    if acknowledgement:
        citation["acknowledgement"] = acknowledgement
    if doi:
        clean = doi.strip()
        clean = re.sub(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", "", clean, flags=re.I)
        citation["doi"] = clean
        citation["doi_url"] = f"https://doi.org/{clean}"
    if pi:
        citation["pi"] = pi.strip()
    affiliation = re.search(r" - ([^-]+?) \(([^)]+)\)\s*$", title or "")
    if affiliation and "pi" in citation and citation["pi"] in affiliation.group(1):
        citation["pi_affiliation"] = affiliation.group(2).strip()
    if title:
        citation["title"] = title.strip()
    if resource_url:
        citation["url"] = resource_url
    return citation


def citation_text(citation: dict[str, Any]) -> str:
    """One line naming dataset, PI and DOI, for figure footers and file headers."""
    if not citation:
        return ""
    parts = [f"Data: {citation.get('dataset', '')}"]
    if citation.get("pi"):
        parts.append(f"PI {citation['pi']}")
    if citation.get("doi"):
        parts.append(f"doi:{citation['doi']}")
    if citation.get("provider"):
        parts.append(f"via {citation['provider']}")
    return "; ".join(parts)


_LOG_UNITS = re.compile(
    r"(?:cm|m)\s*(?:\^|\*\*|!E|!U)?\s*-?\{?-?2|/\s*\(?\s*(?:cm|m)\s*\^?\s*2|"
    r"sr\s*(?:\^|\*\*|!E|!U)?\s*-?\{?-1|/\s*sr\b|\bster|/\s*hz\b|hz\s*\^?-1|"
    r"\bcounts?\b|\bcnts?\b|#\s*/\s*s|\bc/s\b|\bc/acc\b|/\s*\(?\s*cc\b|s\^3|km\^-?6|"
    r"\(?m/s\)?\^-?3|\bev\s*/\s*\(|psd",
    re.IGNORECASE,
)
_LOG_NAMES = re.compile(
    r"flux|count|cnt|rate|intensit|spectr|psd|power|density|dens\b|dist(?:ribution)?|"
    r"eflux|\bdef\b|\bdnf\b|energy_flux|\bj\b|brightness|irradiance",
    re.IGNORECASE,
)


def prefers_log_colour(name: str, units: str, description: str = "") -> bool:
    """Whether values are best coloured on a log scale: fluxes, counts, spectral densities."""
    if _LOG_UNITS.search(units or ""):
        return True
    return bool(_LOG_NAMES.search(f"{name} {description}"))
