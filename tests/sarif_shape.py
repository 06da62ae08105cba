"""The shape of a SARIF 2.1.0 log, as JSON Schema: the objects and properties the OASIS standard
requires or constrains for what our logs carry (sarifLog, run, tool, toolComponent,
reportingDescriptor, result, message, location, physicalLocation, artifactLocation, region),
written from the standard's text. Objects we write are closed (no unknown property may slip in
misspelt); SARIF's own property bags stay open."""

from __future__ import annotations

_MESSAGE = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "markdown": {"type": "string"},
        "id": {"type": "string"},
        "arguments": {"type": "array", "items": {"type": "string"}},
        "properties": {"type": "object"},
    },
    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
    "additionalProperties": False,
}
_MULTIFORMAT = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "markdown": {"type": "string"},
        "properties": {"type": "object"},
    },
    "required": ["text"],
    "additionalProperties": False,
}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
_REGION = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
        "snippet": {"type": "object"},
        "properties": {"type": "object"},
    },
    "additionalProperties": False,
}
_ARTIFACT_LOCATION = {
    "type": "object",
    "properties": {
        "uri": {"type": "string", "format": "uri-reference", "pattern": "^[^\\\\ ]*$"},
        "uriBaseId": {"type": "string"},
        "index": {"type": "integer", "minimum": -1},
        "description": _MESSAGE,
        "properties": {"type": "object"},
    },
    "additionalProperties": False,
}
_PHYSICAL_LOCATION = {
    "type": "object",
    "properties": {
        "artifactLocation": _ARTIFACT_LOCATION,
        "region": _REGION,
        "contextRegion": _REGION,
        "address": {"type": "object"},
        "properties": {"type": "object"},
    },
    "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
    "additionalProperties": False,
}
_LOCATION = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": -1},
        "physicalLocation": _PHYSICAL_LOCATION,
        "logicalLocations": {"type": "array"},
        "message": _MESSAGE,
        "properties": {"type": "object"},
    },
    "additionalProperties": False,
}
_RESULT = {
    "type": "object",
    "properties": {
        "ruleId": {"type": "string"},
        "ruleIndex": {"type": "integer", "minimum": -1},
        "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"]},
        "level": _LEVEL,
        "message": _MESSAGE,
        "locations": {"type": "array", "items": _LOCATION},
        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "fingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "suppressions": {"type": "array"},
        "properties": {"type": "object"},
    },
    "required": ["message"],
    "additionalProperties": False,
}
_DESCRIPTOR = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "shortDescription": _MULTIFORMAT,
        "fullDescription": _MULTIFORMAT,
        "help": _MULTIFORMAT,
        "helpUri": {"type": "string", "format": "uri"},
        "defaultConfiguration": {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "level": _LEVEL,
                "rank": {"type": "number", "minimum": -1, "maximum": 100},
                "parameters": {"type": "object"},
                "properties": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "properties": {"type": "object"},
    },
    "required": ["id"],
    "additionalProperties": False,
}
_DRIVER = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "version": {"type": "string"},
        "semanticVersion": {"type": "string"},
        "informationUri": {"type": "string", "format": "uri"},
        "rules": {"type": "array", "items": _DESCRIPTOR, "uniqueItems": True},
        "properties": {"type": "object"},
    },
    "required": ["name"],
    "additionalProperties": False,
}
SARIF_2_1_0_SHAPE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "properties": {
                    "tool": {
                        "type": "object",
                        "properties": {
                            "driver": _DRIVER,
                            "extensions": {"type": "array"},
                            "properties": {"type": "object"},
                        },
                        "required": ["driver"],
                        "additionalProperties": False,
                    },
                    "results": {"type": ["array", "null"], "items": _RESULT},
                    "invocations": {"type": "array"},
                    "originalUriBaseIds": {"type": "object"},
                    "properties": {"type": "object"},
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["version", "runs"],
    "additionalProperties": False,
}


def check_sarif(log: dict) -> None:
    """Raise if LOG is not SARIF 2.1.0 in shape, or a result's ruleIndex names another rule."""
    import jsonschema

    jsonschema.validate(log, SARIF_2_1_0_SHAPE, format_checker=jsonschema.FormatChecker())
    for run in log["runs"] or []:
        rules = run["tool"]["driver"].get("rules", [])
        for result in run.get("results") or []:
            index = result.get("ruleIndex", -1)
            if index >= 0:
                assert index < len(rules), f"ruleIndex {index} past {len(rules)} rules"
                assert rules[index]["id"] == result.get("ruleId", rules[index]["id"])
