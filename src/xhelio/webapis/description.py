"""Web APIs described as data: the OpenAPI subset xhelio reads, and the APIs it knows.

An API is an OpenAPI 3 document (JSON) of which xhelio reads: ``info`` (title,
description, ``x-citation``), ``servers[0].url``, ``components.securitySchemes`` with
``security`` (an ``apiKey`` in the query or a header, or ``http`` bearer), and for each
path its ``get`` operation: ``operationId`` (the endpoint's name), summary, description,
``parameters`` (query or path; name, required, description, ``schema`` type/enum/format)
and the JSON schema of its 200 answer. Two extensions say how an answer becomes a table:
``x-table`` on an operation (``layout`` ``header-row``/``records``/``hapi``, the ``time``
field, ``columns`` name -> path, ``units``) and ``x-header`` on an answer schema (the
first row a header-row table must have).

Shipped descriptions (``specs/*.json``: NOAA SWPC, NASA DONKI) take their base address
from a setting (``info.x-base-url-setting``) and their key from another
(``info.x-credential-setting``, else ``info.x-default-credential``). The user adds any
OpenAPI service (its JSON file) or HAPI server under ``[web_apis.NAME]`` in the config
file. A host is *user-configured* when its address came from the user (a changed base
setting, or a user API): only those may be loopback or private addresses (see `guard`).

Imports `config` and `errors` only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

from xhelio.config import Settings
from xhelio.errors import ConfigError, UserError

__all__ = ["ApiDescription", "Endpoint", "Param", "hapi_description", "load_apis", "parse_openapi"]

_SHIPPED = ("swpc", "donki")


@dataclass(frozen=True)
class Param:
    """One parameter of an endpoint."""

    name: str
    location: str
    required: bool
    description: str
    type: str = "string"
    enum: tuple[str, ...] = ()
    format: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `describe_api`."""
        out: dict[str, Any] = {"name": self.name, "in": self.location, "type": self.type}
        out["required"] = self.required
        if self.description:
            out["description"] = self.description
        if self.enum:
            out["enum"] = list(self.enum)
        if self.format:
            out["format"] = self.format
        return out


@dataclass(frozen=True)
class Endpoint:
    """One GET operation: its path, parameters, answer schema and table shape."""

    name: str
    path: str
    summary: str
    description: str
    params: tuple[Param, ...]
    schema: dict[str, Any]
    table: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `describe_api`."""
        return {
            "name": self.name,
            "path": self.path,
            "summary": self.summary,
            "description": self.description,
            "parameters": [p.to_dict() for p in self.params],
        }


@dataclass(frozen=True)
class Auth:
    """How the credential travels: a query parameter, a header, or a bearer token."""

    location: str
    name: str
    credential: str = field(repr=False)


@dataclass(frozen=True)
class ApiDescription:
    """One web API: where it is, how to authenticate, and its endpoints."""

    name: str
    title: str
    description: str
    base_url: str
    citation: str
    endpoints: dict[str, Endpoint]
    auth: Auth | None = None
    user_configured: bool = False
    """Its address came from the user, so it may be a loopback or private address."""
    empty_body: Any = None
    """What an empty 200 answer means (DONKI sends nothing when no event matches)."""

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint called `name` (case-insensitive, or by path); a clear error if none."""
        wanted = name.strip().strip("/").lower()
        for key, endpoint in self.endpoints.items():
            if wanted in (key.lower(), endpoint.path.strip("/").lower()):
                return endpoint
        raise UserError(
            f"The {self.name} API has no endpoint {name!r}; its endpoints: "
            f"{', '.join(self.endpoints)} (see describe_api('{self.name}'))."
        )

    def summary(self) -> dict[str, Any]:
        """Name, title, address and endpoint names, for `list_apis`."""
        return {
            "name": self.name,
            "title": self.title,
            "base_url": self.base_url,
            "endpoints": list(self.endpoints),
            "authenticated": self.auth is not None,
        }


def _param(raw: dict[str, Any]) -> Param:
    schema = cast(dict[str, Any], raw.get("schema") or {})
    kind = schema.get("type", "string")
    return Param(
        name=str(raw["name"]),
        location=str(raw.get("in", "query")),
        required=bool(raw.get("required", False)) or raw.get("in") == "path",
        description=str(raw.get("description", "")),
        type=str(kind if isinstance(kind, str) else "string"),
        enum=tuple(str(v) for v in schema.get("enum", ())),
        format=str(schema.get("format", "")),
    )


def _endpoint(path: str, operation: dict[str, Any]) -> Endpoint:
    answer = cast(dict[str, Any], operation.get("responses", {}).get("200", {}))
    content = cast(dict[str, Any], answer.get("content", {}))
    schema = cast(dict[str, Any], content.get("application/json", {}).get("schema", {}))
    name = str(operation.get("operationId") or path.strip("/").replace("/", "_"))
    return Endpoint(
        name=name,
        path=path,
        summary=str(operation.get("summary", "")),
        description=str(operation.get("description", "")),
        params=tuple(_param(p) for p in operation.get("parameters", [])),
        schema=schema,
        table=cast(dict[str, Any], operation.get("x-table", {})),
    )


def _auth(doc: dict[str, Any], credential: str) -> Auth | None:
    schemes = cast(dict[str, Any], doc.get("components", {}).get("securitySchemes", {}))
    if not schemes or not credential:
        return None
    scheme = cast(dict[str, Any], next(iter(schemes.values())))
    if scheme.get("type") == "apiKey" and scheme.get("in") in ("query", "header"):
        return Auth(str(scheme["in"]), str(scheme["name"]), credential)
    return Auth("bearer", "Authorization", credential)


def parse_openapi(
    name: str,
    doc: dict[str, Any],
    *,
    base_url: str | None = None,
    credential: str = "",
    user_configured: bool = False,
) -> ApiDescription:
    """Read the subset xhelio uses from an OpenAPI document (see the module doc).

    Raises:
        ConfigError: The document has no GET operations or no server address.
    """
    info = cast(dict[str, Any], doc.get("info", {}))
    servers = cast(list[dict[str, Any]], doc.get("servers") or [{}])
    url = (base_url or str(servers[0].get("url", ""))).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"Web API {name!r}: its description gives no http(s) server address.")
    paths = cast(dict[str, dict[str, Any]], doc.get("paths", {}))
    endpoints = [_endpoint(p, ops["get"]) for p, ops in paths.items() if "get" in ops]
    if not endpoints:
        raise ConfigError(f"Web API {name!r}: its description has no GET operation.")
    return ApiDescription(
        name=name,
        title=str(info.get("title", name)),
        description=str(info.get("description", "")),
        base_url=url,
        citation=str(info.get("x-citation") or f"{info.get('title', name)}, {url}"),
        endpoints={e.name: e for e in endpoints},
        auth=_auth(doc, credential),
        user_configured=user_configured,
        empty_body=info.get("x-empty-body"),
    )


def _shipped(name: str, settings: Settings) -> ApiDescription:
    text = resources.files("xhelio.webapis").joinpath("specs", f"{name}.json").read_text("utf-8")
    doc = cast(dict[str, Any], json.loads(text))
    info = cast(dict[str, Any], doc["info"])
    default = str(doc["servers"][0]["url"]).rstrip("/")
    base = str(getattr(settings, str(info["x-base-url-setting"]))).rstrip("/")
    setting = info.get("x-credential-setting")
    credential = str(getattr(settings, str(setting), "") if setting else "")
    credential = credential or str(info.get("x-default-credential", ""))
    return parse_openapi(
        name, doc, base_url=base, credential=credential, user_configured=base != default
    )


def hapi_description(name: str, url: str, token: str = "") -> ApiDescription:
    """A HAPI server as a web API: its catalog, a dataset's info, and data as JSON."""
    dataset = Param("id", "query", True, "Dataset id, from the catalog endpoint.")
    data_params = (
        dataset,
        Param("time.min", "query", True, "Start time, ISO 8601 (e.g. 2024-05-10T00:00Z)."),
        Param("time.max", "query", True, "End time, ISO 8601 (exclusive)."),
        Param("parameters", "query", False, "Comma-separated parameter names (default: all)."),
        Param("format", "query", False, "Always json here.", enum=("json",)),
    )
    endpoints = (
        Endpoint("catalog", "/catalog", "The datasets this server offers", "", (), {}, {}),
        Endpoint("info", "/info", "One dataset's parameters", "", (dataset,), {}, {}),
        Endpoint(
            "data",
            "/data",
            "Data of a dataset over a time range, as a table",
            "Answer in HAPI JSON; the table has one column per parameter.",
            data_params,
            {"type": "object", "required": ["parameters", "data"]},
            {"layout": "hapi"},
        ),
    )
    return ApiDescription(
        name=name,
        title=f"HAPI server {name}",
        description=f"A HAPI server added by the user ({url}).",
        base_url=url.rstrip("/"),
        citation=f"HAPI server {url}",
        endpoints={e.name: e for e in endpoints},
        auth=Auth("bearer", "Authorization", token) if token else None,
        user_configured=True,
    )


def _user_api(entry: tuple[str, str, str, str, str], settings: Settings) -> ApiDescription:
    name, kind, url, spec, token = entry
    if kind == "hapi":
        return hapi_description(name, url, token)
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = settings.home / path
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"Web API {name!r}: its description {path} cannot be read as JSON ({exc}). Fix "
            f"spec in [web_apis.{name}] of {settings.config_file}."
        ) from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"Web API {name!r}: {path} is not an OpenAPI JSON object.")
    return parse_openapi(
        name,
        cast(dict[str, Any], doc),
        base_url=url,
        credential=token,
        user_configured=True,
    )


def load_apis(settings: Settings) -> dict[str, ApiDescription]:
    """Every web API xhelio may call: the shipped ones, then the user's (same name wins)."""
    apis = {name: _shipped(name, settings) for name in _SHIPPED}
    for entry in settings.web_apis:
        apis[entry[0]] = _user_api(entry, settings)
    return apis
