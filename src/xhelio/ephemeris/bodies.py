"""What can be located: bodies and spacecraft by name, with their NAIF ids and where data is.

Each `Body` says its NAIF id (None where NAIF assigns none), the names people call it, the
CDAWeb position dataset prefix (``<PREFIX>_HELIO1HR_POSITION``, the heliocentric archive
fallback), where its SPICE ephemeris kernel is published (a folder and a file-name pattern;
the newest matching file is used; folders are relative to the NAIF base address unless
they are absolute addresses) and, for Earth orbiters, where their geocentric orbit is
served: the SSCWeb satellite id (one HAPI dataset per spacecraft) and the mission's own
CDAWeb orbit datasets (a GSE position vector).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xhelio.errors import UserError

__all__ = [
    "BODIES",
    "Body",
    "KernelLocation",
    "OrbitDataset",
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
    spans: bool = False
    """The mission publishes one file per period, its name ending ``_YYDDD_YYDDD.bsp``
    (first and last day, two-digit year and day of year, as NAIF names Cassini's and
    Helios' reconstructed SPKs): every file covering the request is used."""


@dataclass(frozen=True)
class OrbitDataset:
    """A mission's own geocentric orbit dataset: its id and its GSE position vector."""

    dataset: str
    parameter: str


@dataclass(frozen=True)
class Body:
    """A body or spacecraft that can be located."""

    key: str
    """The canonical name, as results say it (e.g. PSP, EARTH)."""
    naif_id: int | None
    """NAIF's id (None: NAIF assigns none, so only an orbit source can locate it)."""
    names: tuple[str, ...] = ()
    """Other names people use (matched without case, spaces, dashes or underscores)."""
    position_prefix: str | None = None
    """CDAWeb position dataset prefix: ``<prefix>_HELIO1HR_POSITION`` (None: none served)."""
    kernel: KernelLocation | None = None
    """Where its SPK is published (None: the generic planetary ephemeris covers it)."""
    sscweb: str | None = None
    """SSCWeb satellite id, its dataset on SSCWeb's HAPI server (Earth orbiters)."""
    orbit: tuple[OrbitDataset, ...] = ()
    """The mission's own CDAWeb orbit datasets (GSE positions), tried after SSCWeb."""

    @property
    def is_natural(self) -> bool:
        """A planet, moon or the Sun (positive NAIF id), covered by the generic ephemeris."""
        return self.naif_id is not None and self.naif_id >= 0

    @property
    def is_earth_orbiter(self) -> bool:
        """Whether a geocentric orbit source serves it (SSCWeb or a mission dataset)."""
        return self.sscweb is not None or bool(self.orbit)

    @property
    def has_kernel(self) -> bool:
        """Whether a kernel can locate it without the user's own: natural, or published."""
        return self.is_natural or self.kernel is not None


def _spk(folder: str, pattern: str, spans: bool = False) -> KernelLocation:
    return KernelLocation(folder, pattern, spans)


_HELIOS_SPK = "HELIOS/kernels/spk/"
_CASSINI_SPK = "pds/data/co-s_j_e_v-spice-6-v1.0/cosp_1000/data/spk/"


def _orbiter(
    key: str,
    names: tuple[str, ...],
    sscweb: str,
    *orbit: tuple[str, str],
    naif_id: int | None = None,
    position_prefix: str | None = None,
) -> Body:
    """An Earth orbiter: its SSCWeb id and its mission's orbit datasets (dataset, GSE vector)."""
    datasets = tuple(OrbitDataset(d, p) for d, p in orbit)
    return Body(key, naif_id, names, position_prefix, None, sscweb, datasets)


def _mms(n: int) -> Body:
    names = (f"mms {n}", f"mms{n}") + (("mms",) if n == 1 else ())
    return _orbiter(
        f"MMS{n}", names, f"mms{n}", (f"MMS{n}_MEC_SRVY_L2_EPHT89D", f"mms{n}_mec_r_gse")
    )


def _themis(probe: str, naif_id: int, *names: str) -> Body:
    low = probe.lower()
    prefix = f"TH{probe}" if probe in "BC" else None
    kernel = _spk("THEMIS/kernels/spk/", rf"THEMIS_{probe}_definitive_trajectory\.bsp")
    return Body(
        f"THEMIS-{probe}",
        naif_id,
        (*([f"th{low}"] if probe != "E" else []), *names),  # not "the"
        prefix,
        kernel,
        f"themis{low}",
        (OrbitDataset(f"TH{probe}_OR_SSC", "XYZ_GSE"),),
    )


def _goes(n: int) -> Body:
    return _orbiter(
        f"GOES-{n}", (f"goes {n}", f"goes{n}"), f"goes{n}", (f"GOES{n}_EPHEMERIS_SSC", "XYZ_GSE")
    )


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
        _spk(
            "https://cdaweb.gsfc.nasa.gov/pub/data/psp/ephemeris/spice/ephemerides/",
            r"spp_nom_\d{8}_\d{8}_v\d{3}.*\.bsp",
        ),
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
        _spk("STEREO/kernels/spk/", r"STEREO-A_merged\.bsp"),
    ),
    Body(
        "STEREO-B",
        -235,
        ("stereo b", "stereo behind", "stb", "stereob"),
        "STB",
        _spk(
            "https://sohoftp.nascom.nasa.gov/solarsoft/stereo/gen/data/spice/epm/behind/",
            r"behind_\d{4}_\d{3}_\d{2}\.epm\.bsp",
        ),
    ),
    Body(
        "SOHO",
        -21,
        (),
        "SOHO",
        _spk("https://soho.nascom.nasa.gov/data/ancillary/orbit/spice/", r"soho_orbit\.bsp"),
    ),
    Body("WIND", -8, (), "WIND"),
    Body("ACE", -92, ("advanced composition explorer",), None, None, "ace"),
    Body(
        "ULYSSES",
        -55,
        (),
        "ULYSSES",
        _spk("ULYSSES/kernels/spk/", r"ulysses_\d{4}_\d{4}_\d{4}\.bsp"),
    ),
    Body(
        "HELIOS-1",
        -301,
        ("helios 1", "helios1"),
        "HELIOS1",
        _spk(_HELIOS_SPK, r"\d{6}[A-Z]*_helios1_\d{5}_\d{5}\.bsp", spans=True),
    ),
    Body(
        "HELIOS-2",
        -302,
        ("helios 2", "helios2"),
        "HELIOS2",
        _spk(_HELIOS_SPK, r"\d{6}[A-Z]*_helios2_\d{5}_\d{5}\.bsp", spans=True),
    ),
    Body("BEPICOLOMBO", -121, ("bepi", "bepi colombo", "mpo"), "BEPICOLOMBO"),
    Body("JUNO", -61, (), "JUNO", _spk("JUNO/kernels/spk/", r"juno_rec_orbit\.bsp")),
    Body(
        "CASSINI",
        -82,
        (),
        "CASSINI",
        _spk(_CASSINI_SPK, r"\d{6}[A-Z]*_SCPSE_\d{5}_\d{5}\.bsp", spans=True),
    ),
    Body("MAVEN", -202, (), "MAVEN", _spk("MAVEN/kernels/spk/", r"maven_orb_rec\.bsp")),
    Body("MESSENGER", -236, (), "MESSENGER"),
    Body("NEW-HORIZONS", -98, ("new horizons", "nh"), "NEW_HORIZONS"),
    Body(
        "VOYAGER-1",
        -31,
        ("voyager 1", "voyager1", "vgr1"),
        None,
        _spk("VOYAGER/kernels/spk/", r"vgr1\.x2100\.bsp"),
    ),
    Body(
        "VOYAGER-2",
        -32,
        ("voyager 2", "voyager2", "vgr2"),
        None,
        _spk("VOYAGER/kernels/spk/", r"vgr2\.x2100\.bsp"),
    ),
    Body(
        "PIONEER-10",
        -23,
        ("pioneer 10", "pioneer10"),
        "PIONEER10",
        _spk("PIONEER10/kernels/spk/", r"p10-a\.bsp"),
    ),
    Body(
        "PIONEER-11",
        -24,
        ("pioneer 11", "pioneer11"),
        "PIONEER11",
        _spk("PIONEER11/kernels/spk/", r"p11-a\.bsp"),
    ),
    _orbiter("DSCOVR", (), "dscovr", naif_id=-78),
    *(_mms(n) for n in (1, 2, 3, 4)),
    _themis("A", -650),
    _themis("B", -651, "artemis p1", "artemis-p1"),
    _themis("C", -652, "artemis p2", "artemis-p2"),
    _themis("D", -653),
    _themis("E", -654),
    *(
        _orbiter(f"CLUSTER-{n}", (f"cluster {n}", f"cluster{n}"), f"cluster{n}")
        for n in (1, 2, 3, 4)
    ),
    _orbiter(
        "RBSP-A", ("van allen probe a", "van allen probes a", "rbspa", "rbsp a", "vap-a"), "rbspa"
    ),
    _orbiter(
        "RBSP-B", ("van allen probe b", "van allen probes b", "rbspb", "rbsp b", "vap-b"), "rbspb"
    ),
    _orbiter("GEOTAIL", (), "geotail", ("GE_OR_DEF", "GSE_POS")),
    _orbiter("POLAR", (), "polar", ("PO_OR_DEF", "GSE_POS")),
    _orbiter("ARASE", ("erg satellite",), "arase"),
    _orbiter("IMP-8", ("imp 8", "imp8"), "imp8"),
    _orbiter("TWINS-1", ("twins 1", "twins1"), "twins1"),
    _orbiter("TWINS-2", ("twins 2", "twins2"), "twins2"),
    *(_goes(n) for n in range(8, 19)),
)
"""Names, ids and sources. SSCWeb ids are those of SSCWeb's observatory list; NAIF ids only
where NAIF assigns them (THEMIS -650..-654, DSCOVR -78)."""


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
