"""Check a JSON body against a schema of a discovery document that ships in googleapiclient.

Discovery schemas are JSON-Schema-like but their own dialect (``$ref`` by schema id, int64 as
strings with ``format``, enums beside ``type``), so this small checker reads them directly. It
is strict where the server would be, and stricter where a silent drop would hide a bug: an
unknown key is an error here, although the API would ignore it.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import googleapiclient

DOCUMENTS = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
_INT = re.compile(r"^-?\d+$")
_DURATION = re.compile(r"^-?\d+(\.\d{1,9})?s$")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")
_INT32 = (-(2**31), 2**31 - 1)


@cache
def discovery_document(api: str, version: str) -> dict[str, Any]:
    """The discovery document googleapiclient builds ``api`` ``version`` from (no network)."""
    return dict(json.loads((DOCUMENTS / f"{api}.{version}.json").read_text()))


def method(api: str, version: str, method_id: str) -> dict[str, Any]:
    """A method by its id, e.g. ``aiplatform.projects.locations.customJobs.create``."""

    def walk(resources: dict[str, Any]) -> dict[str, Any] | None:
        for res in resources.values():
            for m in res.get("methods", {}).values():
                if m.get("id") == method_id:
                    return dict(m)
            found = walk(res.get("resources", {}))
            if found is not None:
                return found
        return None

    found = walk(discovery_document(api, version).get("resources", {}))
    if found is None:
        raise KeyError(method_id)
    return found


def violations(
    api: str, version: str, schema_id: str, value: object, *, request: bool = False
) -> list[str]:
    """Every way ``value`` breaks schema ``schema_id``, as ``path: why`` lines; [] when valid.

    With ``request``, a field the document describes as "Output only." is an error too: a
    client that sends one has mixed up a response with a request.
    """
    schemas = discovery_document(api, version)["schemas"]
    out: list[str] = []
    _check(schemas, {"$ref": schema_id}, value, schema_id, out, request)
    return out


def _check(
    schemas: dict[str, Any],
    spec: dict[str, Any],
    value: object,
    path: str,
    out: list[str],
    request: bool = False,
) -> None:
    ref = spec.get("$ref")
    if ref is not None:
        spec = schemas[ref]
    kind = spec.get("type")
    fmt = spec.get("format")
    if kind == "object" or "properties" in spec:
        if not isinstance(value, dict):
            out.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        props: dict[str, Any] = spec.get("properties", {})
        extra = spec.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                if request and str(props[key].get("description", "")).startswith("Output only."):
                    out.append(f"{path}: {key!r} is output only")
                _check(schemas, props[key], item, f"{path}.{key}", out, request)
            elif extra is not None:
                _check(schemas, extra, item, f"{path}[{key!r}]", out, request)
            else:
                out.append(f"{path}: unknown field {key!r}")
        return
    if kind == "array":
        if not isinstance(value, list):
            out.append(f"{path}: expected an array, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            _check(schemas, spec["items"], item, f"{path}[{i}]", out, request)
        return
    if kind == "boolean":
        if not isinstance(value, bool):
            out.append(f"{path}: expected a boolean, got {value!r}")
        return
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            out.append(f"{path}: expected an integer, got {value!r}")
        elif fmt == "int32" and not _INT32[0] <= value <= _INT32[1]:
            out.append(f"{path}: {value} is out of int32 range")
        return
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            out.append(f"{path}: expected a number, got {value!r}")
        return
    if kind == "string":
        if not isinstance(value, str):
            out.append(f"{path}: expected a string, got {value!r}")
            return
        enum = spec.get("enum")
        if enum is not None and value not in enum:
            out.append(f"{path}: {value!r} is not one of {', '.join(enum)}")
        if fmt in ("int64", "uint64") and not _INT.match(value):
            out.append(f"{path}: {value!r} is not an {fmt} string")
        if fmt == "google-duration" and not _DURATION.match(value):
            out.append(f"{path}: {value!r} is not a duration like '3600s'")
        if fmt == "google-datetime" and not _TIME.match(value):
            out.append(f"{path}: {value!r} is not an RFC 3339 timestamp")
        return
    if kind == "any" or kind is None:
        return
    out.append(f"{path}: the schema has an unknown type {kind!r}")
