"""The package against the OpenAPI document the service serves: every operation has a method,
every error code a class, every list filter a parameter. A new operation, code or filter in the
service fails here until the package covers it."""

from __future__ import annotations

import inspect
import json
import unittest
import urllib.request
from typing import Any, Dict

import support
from starport import ERROR_CLASSES, OPERATIONS, RECIPIENT_REFUSAL_REASONS, STATEMENT_UNAVAILABLE_REASONS, Starport

service: support.Service
document: Dict[str, Any]

METHODS = ("get", "post", "put", "patch", "delete")
#: Query parameters a method exposes under another name.
RENAMED = {"created[gte]": "created_gte", "created[lt]": "created_lt"}
#: Cursor parameters the iterators drive themselves (they page forwards, newest first).
DRIVEN = {"ending_before"}


def setUpModule() -> None:
    global service, document
    service = support.Service()
    with urllib.request.urlopen(f"{service.api}/openapi.json", timeout=30) as response:
        document = json.load(response)


def tearDownModule() -> None:
    service.close()


class Drift(unittest.TestCase):
    def served_operations(self) -> Dict[Any, Dict[str, Any]]:
        return {(method.upper(), path): operation for path, item in document["paths"].items() for method, operation in item.items() if method in METHODS}

    def test_every_served_operation_has_a_method(self) -> None:
        served = self.served_operations()
        self.assertGreaterEqual(len(served), 14)
        missing = sorted(set(served) - set(OPERATIONS))
        self.assertEqual(missing, [], "operations the package does not cover")
        stale = sorted(set(OPERATIONS) - set(served))
        self.assertEqual(stale, [], "operations the package names that the service does not serve")
        for name in OPERATIONS.values():
            self.assertTrue(callable(getattr(Starport, name, None)), name)

    def test_every_query_parameter_of_an_operation_is_a_parameter_of_its_method(self) -> None:
        for key, operation in self.served_operations().items():
            method = getattr(Starport, OPERATIONS[key])
            accepted = set(inspect.signature(method).parameters)
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "query" or parameter["name"] in DRIVEN:
                    continue
                self.assertIn(RENAMED.get(parameter["name"], parameter["name"]), accepted, f"{key}: query parameter {parameter['name']}")

    def test_every_body_field_of_an_operation_is_a_parameter_of_its_method(self) -> None:
        schemas = document["components"]["schemas"]
        for key, operation in self.served_operations().items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if not content:
                continue
            schema = content["schema"]
            if "$ref" in schema:
                schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
            accepted = set(inspect.signature(getattr(Starport, OPERATIONS[key])).parameters)
            for field in schema.get("properties", {}):
                self.assertIn(field, accepted, f"{key}: body field {field}")

    def test_every_error_code_has_its_class(self) -> None:
        codes = document["components"]["schemas"]["ErrorCode"]["enum"]
        self.assertGreaterEqual(len(codes), 33)
        self.assertEqual(sorted(set(codes) - set(ERROR_CLASSES)), [], "error codes the package does not cover")
        self.assertEqual(sorted(set(ERROR_CLASSES) - set(codes)), [], "error codes the service no longer has")

    def test_every_refusal_reason_is_known(self) -> None:
        reasons = document["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["details"]["properties"]["reason"]["enum"]
        self.assertEqual(sorted(reasons), sorted(RECIPIENT_REFUSAL_REASONS + STATEMENT_UNAVAILABLE_REASONS), "recipient_invalid and statement_not_found reasons")


if __name__ == "__main__":
    unittest.main()
