"""`WebApis`: list, describe and call the described web APIs, answers as cited tables.

A call checks its parameters against the endpoint's description (unknown, missing,
outside an enum, a date that is not yyyy-MM-dd: a `UserError` naming what is allowed),
adds the credential where the description says, GETs through the guarded `WebClient`,
checks the answer against the described schema (a mismatch is `SchemaDriftError`: the
service changed its format) and returns an `ApiTable`: the table, its units, the address
asked (credential hidden) and the citation. Imports `config`, `errors` and `webapis`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pandas as pd

from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.sources.http import RetryPolicy
from xhelio.webapis.client import WebClient
from xhelio.webapis.description import ApiDescription, Endpoint, load_apis
from xhelio.webapis.guard import HostPolicy
from xhelio.webapis.schema import SchemaDriftError, problems
from xhelio.webapis.tables import to_table

__all__ = ["ApiTable", "WebApis"]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class ApiTable:
    """One call's answer as a table, with what to cite."""

    api: str
    endpoint: str
    title: str
    frame: pd.DataFrame
    units: dict[str, str]
    url: str
    citation: str
    params: dict[str, str] = field(default_factory=dict[str, str])


class WebApis:
    """The web APIs of one settings, behind one allowlist."""

    def __init__(
        self,
        settings: Settings,
        apis: Mapping[str, ApiDescription] | None = None,
        extra_hosts: Iterable[tuple[str, bool]] = (),
        retry: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.apis = dict(apis) if apis is not None else load_apis(settings)
        self.policy = HostPolicy()
        self.policy.allow_all((a.base_url, a.user_configured) for a in self.apis.values())
        self.policy.allow_all(extra_hosts)
        self.client = WebClient(settings, self.policy, retry)

    def get(self, name: str) -> ApiDescription:
        """The API called `name`; a clear error naming the known ones."""
        api = self.apis.get(name.strip().lower())
        if api is None:
            raise UserError(f"No web API {name!r}; known: {', '.join(self.apis)} (list_apis).")
        return api

    def call(self, api_name: str, endpoint_name: str, params: Mapping[str, Any]) -> ApiTable:
        """Call one endpoint and return its answer as a cited table.

        Raises:
            UserError: Unknown API/endpoint or invalid parameters.
            BlockedAddressError: The address is outside the allowlist.
            SchemaDriftError: The answer does not match its description.
            ServerError: The service failed or answered something unusable.
        """
        api = self.get(api_name)
        endpoint = api.endpoint(endpoint_name)
        values = _checked_params(api, endpoint, params)
        path = endpoint.path
        query: dict[str, str] = {}
        for param in endpoint.params:
            if param.name not in values:
                continue
            if param.location == "path":
                path = path.replace(f"{{{param.name}}}", quote(values[param.name], safe=""))
            else:
                query[param.name] = values[param.name]
        headers: dict[str, str] = {}
        if api.auth is not None:
            if api.auth.location == "query":
                query[api.auth.name] = api.auth.credential
            elif api.auth.location == "header":
                headers[api.auth.name] = api.auth.credential
            else:
                headers["Authorization"] = f"Bearer {api.auth.credential}"
        what = f"{api.title} {endpoint.name}"
        answer = self.client.get_json(
            api.base_url + path, params=query, headers=headers, what=what, empty=api.empty_body
        )
        found = problems(answer.value, endpoint.schema)
        if found:
            raise SchemaDriftError(
                f"{what}: the answer of {answer.url} does not match its description "
                f"({'; '.join(found)}). The service has changed its format; the description "
                "must be updated before its data can be trusted."
            )
        frame = to_table(answer.value, endpoint.table, what)
        units = {str(k): str(v) for k, v in endpoint.table.get("units", {}).items()}
        return ApiTable(
            api=api.name,
            endpoint=endpoint.name,
            title=f"{api.title}: {endpoint.summary or endpoint.name}",
            frame=frame,
            units={str(c): units.get(str(c), "") for c in frame.columns},
            url=answer.url,
            citation=api.citation,
            params=values,
        )


def _checked_params(
    api: ApiDescription, endpoint: Endpoint, given: Mapping[str, Any]
) -> dict[str, str]:
    known = {p.name: p for p in endpoint.params}
    values = {str(k): str(v).strip() for k, v in given.items() if v is not None}
    unknown = sorted(set(values) - set(known))
    if unknown:
        names = ", ".join(known) or "none"
        raise UserError(
            f"{api.name} {endpoint.name} has no parameter {', '.join(unknown)}; its "
            f"parameters: {names}."
        )
    for param in endpoint.params:
        value = values.get(param.name)
        if value is None or value == "":
            if param.required:
                raise UserError(
                    f"{api.name} {endpoint.name} needs the parameter {param.name!r}"
                    f" ({param.description or param.type})."
                )
            values.pop(param.name, None)
            continue
        if param.enum and value not in param.enum:
            raise UserError(
                f"{api.name} {endpoint.name}: {param.name}={value!r} is not one of "
                f"{', '.join(param.enum)}."
            )
        if param.format == "date" and not _DATE.match(value):
            raise UserError(
                f"{api.name} {endpoint.name}: {param.name}={value!r} must be a date written "
                "yyyy-MM-dd, e.g. 2024-05-08."
            )
    return values
