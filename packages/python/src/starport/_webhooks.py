"""Webhook signatures, Standard Webhooks style (docs/api.md, Webhooks): the headers
``webhook-id``, ``webhook-timestamp`` (Unix seconds) and ``webhook-signature`` (space-separated
``v1,<base64 HMAC-SHA256>`` entries; two while a secret rotation is in its grace period) sign
``{id}.{timestamp}.{raw body}`` with the endpoint secret ``whsec_<base64>``."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union

from ._errors import WebhookVerificationError
from ._types import WebhookEvent

Headers = Union[Mapping[str, Any], Iterable[Tuple[str, str]]]

DEFAULT_TOLERANCE = 300


def _header(headers: Headers, name: str) -> Optional[str]:
    items = headers.items() if isinstance(headers, Mapping) or hasattr(headers, "items") else headers
    values = []
    for key, value in items:  # type: ignore[union-attr]
        if str(key).lower() == name:
            values.extend(value if isinstance(value, (list, tuple)) else [value])
    return " ".join(str(v) for v in values) if values else None


def _secret_bytes(secret: str) -> bytes:
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise WebhookVerificationError('The webhook secret is not "whsec_" followed by base64.')
    return key


def _sign(secret: str, message_id: str, timestamp: str, payload: bytes) -> bytes:
    content = f"{message_id}.{timestamp}.".encode("utf-8") + payload
    return hmac.new(_secret_bytes(secret), content, hashlib.sha256).digest()


def verify_webhook(
    payload: Union[bytes, str],
    headers: Headers,
    secret: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies a webhook delivery and returns its event; raises WebhookVerificationError otherwise.

    Pass the raw body exactly as received (bytes, before any JSON parsing) and the request's
    headers (a dict, a case-insensitive mapping such as ``http.client.HTTPMessage`` or a
    framework's headers, or (name, value) pairs). A timestamp more than ``tolerance`` seconds
    (default 5 minutes) from now, in either direction, is refused.
    """
    raw = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    message_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not stamp or not signatures:
        raise WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header.")
    if not stamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not Unix seconds.")
    age = int(time.time() if now is None else now) - int(stamp)
    if age > tolerance:
        raise WebhookVerificationError("The webhook timestamp is too old.")
    if age < -tolerance:
        raise WebhookVerificationError("The webhook timestamp is too far in the future.")

    expected = _sign(secret, message_id, stamp, raw)
    matched = False
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version != "v1" or not value:
            continue
        try:
            candidate = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(candidate, expected):
            matched = True
    if not matched:
        raise WebhookVerificationError("No webhook signature matches.")
    try:
        event = json.loads(raw.decode("utf-8"))
    except ValueError:
        raise WebhookVerificationError("The webhook body is not JSON.") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("The webhook body is not a JSON object.")
    try:
        return WebhookEvent.from_json(event)
    except (KeyError, TypeError, ValueError) as error:
        raise WebhookVerificationError(f"The webhook body is not a Starport event: {error}") from None


def sign_webhook(payload: Union[bytes, str], secret: str, message_id: str, timestamp: Optional[int] = None) -> Dict[str, str]:
    """The headers a sender puts on a delivery: for your own tests."""
    raw = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = base64.b64encode(_sign(secret, message_id, stamp, raw)).decode("ascii")
    return {"webhook-id": message_id, "webhook-timestamp": stamp, "webhook-signature": f"v1,{signature}"}
