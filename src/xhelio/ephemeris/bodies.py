"""What can be located: bodies and spacecraft by name, with their NAIF ids and where data is.

Each `Body` says its NAIF id, the names people call it, the CDAWeb position dataset prefix
(``<PREFIX>_HELIO1HR_POSITION``, the archive fallback) and where its SPICE ephemeris kernel
is published (a folder and a file-name pattern; the newest matching file is used). Kernel
folders are relative to the NAIF base address unless they are absolute addresses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xhelio.errors import UserError

__all__ = [
    "BODIES",
    "Body",
    "KernelLocation",
    "UnknownBodyError",
    "bodies_in",
    "find_body",
    "resolve_body",
]


@dataclass(frozen=True)
class KernelLocation:
    """Where a mission's SPK is published: a folder and a regular expression for file names."""

    folder: str
    pattern: str


@dataclass(frozen=True)
class Body:
    """A body or spacecraft that can be located."""

    key: str
    """The canonical name, as results say it (e.g. PSP, EARTH)."""
    naif_id: int
    names: tuple[str, ...] = ()
    """Other names people use (matched without case, spaces, dashes or underscores)."""
    position_prefix: str | None = None
    """CDAWeb position dataset prefix: ``<prefix>_HELIO1HR_POSITION`` (None: none served)."""
    kernel: KernelLocation | None = None
    """Where its SPK is published (None: the generic planetary ephemeris covers it)."""

    @property
    def is_natural(self) -> bool:
        """A planet, moon or the Sun (positive NAIF id), covered by the generic ephemeris."""
        return self.naif_id >= 0


def _spk(folder: str, pattern: str) -> KernelLocation:
    return KernelLocation(folder, pattern)


BODIES: tuple[Body, ...] = (
    Body("SUN", 10),
    Body("MERCURY", 199, (), "MERCURY"),
    Body("VENUS", 299, (), "VENUS"),
    Body("EARTH", 399, ("earth-moon",), "EARTH"),
    Body("MOON", 301, ("luna",)),
    Body("MARS", 499, (), "MARS"),
    Body("JUPITER", 599, (), "JUPITER"),
    Body("SATURN", 699, (), "SATURN"),
    Body("URANUS", 799, (), "URANUS"),
    Body("NEPTUNE", 899, (), "NEPTUNE"),
    Body("PLUTO", 999, (), "PLUTO"),
    Body(
        "PSP",
        -96,
        ("parker solar probe", "parker", "spp", "solar probe plus"),
        "PSP",
        _spk("PSP/kernels/spk/", r"spp_(nom|recon)_.*\.bsp"),
    ),
    Body(
        "SOLO",
        -144,
        ("solar orbiter", "solarorbiter", "solo"),
        "SOLO",
        _spk(
            "https://spiftp.esac.esa.int/data/SPICE/SOLAR-ORBITER/kernels/spk/",
            r"solo_ANC_soc-orbit-stp_.*\.bsp",
        ),
    ),
    Body(
        "STEREO-A",
        -234,
        ("stereo a", "stereo ahead", "sta", "stereoa"),
        "STA",
        _spk("STEREO/kernels/spk/", r"ahead_.*\.bsp"),
    ),
    Body(
        "STEREO-B",
        -235,
        ("stereo b", "stereo behind", "stb", "stereob"),
        "STB",
        _spk("STEREO/kernels/spk/", r"behind_.*\.bsp"),
    ),
    Body("SOHO", -21, (), "SOHO"),
    Body("WIND", -8, (), "WIND"),
    Body("ACE", -92, ("advanced composition explorer",)),
    Body("ULYSSES", -55, (), "ULYSSES"),
    Body("HELIOS-1", -301, ("helios 1", "helios1"), "HELIOS1"),
    Body("HELIOS-2", -302, ("helios 2", "helios2"), "HELIOS2"),
    Body("BEPICOLOMBO", -121, ("bepi", "bepi colombo", "mpo"), "BEPICOLOMBO"),
    Body("JUNO", -61, (), "JUNO", _spk("JUNO/kernels/spk/", r"juno_rec_orbit.*\.bsp")),
    Body("CASSINI", -82, (), "CASSINI", _spk("CASSINI/kernels/spk/", r".*_SCPSE_.*\.bsp")),
    Body("MAVEN", -202, (), "MAVEN", _spk("MAVEN/kernels/spk/", r"maven_orb_rec.*\.bsp")),
    Body("MESSENGER", -236, (), "MESSENGER"),
    Body("NEW-HORIZONS", -98, ("new horizons", "nh"), "NEW_HORIZONS"),
    Body(
        "VOYAGER-1",
        -31,
        ("voyager 1", "voyager1", "vgr1"),
        None,
        _spk("VOYAGER/kernels/spk/", r"voyager_1\..*\.bsp"),
    ),
    Body(
        "VOYAGER-2",
        -32,
        ("voyager 2", "voyager2", "vgr2"),
        None,
        _spk("VOYAGER/kernels/spk/", r"voyager_2\..*\.bsp"),
    ),
    Body("PIONEER-10", -23, ("pioneer 10", "pioneer10"), "PIONEER10"),
    Body("PIONEER-11", -24, ("pioneer 11", "pioneer11"), "PIONEER11"),
    Body("THEMIS-B", -651, ("artemis p1", "thb"), "THB"),
    Body("THEMIS-C", -652, ("artemis p2", "thc"), "THC"),
)


class UnknownBodyError(UserError):
    """A name that is no known body or spacecraft."""


def _squash(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.strip().lower())


_BY_NAME: dict[str, Body] = {}
for _body in BODIES:
    for _name in (_body.key, *_body.names):
        _BY_NAME.setdefault(_squash(_name), _body)


def find_body(name: str) -> Body | None:
    """The body called `name` (any known name or a NAIF id), or None."""
    text = name.strip()
    if re.fullmatch(r"-?\d+", text):
        number = int(text)
        return next((b for b in BODIES if b.naif_id == number), Body(text, number))
    return _BY_NAME.get(_squash(text))


def resolve_body(name: str) -> Body:
    """The body called `name`.

    Raises:
        UnknownBodyError: no body has that name (the message lists the known ones).
    """
    found = find_body(name)
    if found is None:
        known = ", ".join(b.key for b in BODIES)
        raise UnknownBodyError(
            f"Unknown body or spacecraft {name!r}. Known: {known}; or give a NAIF id "
            "(e.g. -96) with a kernel that covers it (--kernel)."
        )
    return found


def _name_pattern(name: str) -> str:
    parts = re.split(r"[\s_\-]+", name.strip())
    return r"[\s_\-]?".join(re.escape(p) for p in parts if p)


_MENTION = re.compile(
    r"(?<![\w-])("
    + "|".join(
        sorted(
            {_name_pattern(n) for b in BODIES for n in (b.key, *b.names)},
            key=len,
            reverse=True,
        )
    )
    + r")(?![\w-])",
    re.IGNORECASE,
)


def bodies_in(text: str) -> list[Body]:
    """The bodies and spacecraft `text` names, in the order it names them, each once."""
    found: dict[str, Body] = {}
    for match in _MENTION.finditer(text):
        body = find_body(match.group(1))
        if body is not None:
            found.setdefault(body.key, body)
    return list(found.values())
