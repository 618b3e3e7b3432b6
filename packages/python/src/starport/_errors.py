"""The exceptions the client raises: one class per API error code (docs/api.md's error table)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Type

if TYPE_CHECKING:
    from ._types import Order


class StarportError(Exception):
    """Every error the client raises.

    API errors carry the API's ``code`` (match on it, or on the subclass), the HTTP ``status``,
    ``param`` when one input is at fault, ``details`` where the code has them and the
    ``request_id`` to quote to support. The client's own codes: ``connection_error``,
    ``timeout``, ``invalid_response``, ``wait_timeout``, ``webhook_invalid``.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: Optional[int] = None,
        param: Optional[str] = None,
        details: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.param = param
        self.details = details
        self.request_id = request_id
        self.headers: Mapping[str, str] = dict(headers or {})
        self.body = body

    def __str__(self) -> str:
        where = f" (HTTP {self.status}, {self.code}" if self.status is not None else f" ({self.code}"
        request = f", request {self.request_id})" if self.request_id else ")"
        return f"{self.message}{where}{request}"

    def _header(self, name: str) -> Optional[str]:
        for key, value in self.headers.items():
            if key.lower() == name:
                return value
        return None

    @property
    def retry_after(self) -> Optional[int]:
        """Seconds the service asked to wait (Retry-After in delta-seconds), if it did."""
        value = self._header("retry-after")
        return int(value) if value is not None and value.isdigit() else None


# Categories, by HTTP status.
class InvalidRequestError(StarportError):
    """400, 413, 415: the request is wrong; fix it before sending it again."""


class AuthenticationError(StarportError):
    """401: the key is missing, malformed, unknown or revoked, or the account is disabled."""


class PermissionDeniedError(StarportError):
    """403: the endpoint needs the other kind of key."""


class NotFoundError(StarportError):
    """404."""


class ConflictError(StarportError):
    """409."""


class ServerError(StarportError):
    """5xx."""


class UnavailableError(ServerError):
    """503: the service cannot do this right now; nothing was reserved or charged."""


# One class per API error code.
class InsufficientBalance(StarportError):
    """402 ``insufficient_balance``: no order was created and nothing reserved."""

    def _money(self, name: str) -> Optional[Decimal]:
        value = (self.details or {}).get(name)
        try:
            return Decimal(value) if isinstance(value, str) else None
        except InvalidOperation:
            return None

    @property
    def available(self) -> Optional[Decimal]:
        """What could be spent (TON)."""
        return self._money("available")

    @property
    def required(self) -> Optional[Decimal]:
        """What the order would have cost (TON)."""
        return self._money("required")


class IdempotencyConflict(ConflictError):
    """409 ``idempotency_conflict``: this Idempotency-Key created an order with other parameters."""


class IdempotencyKeyInUse(ConflictError):
    """409 ``idempotency_key_in_use``: the first request with this key is still running (retried)."""


#: Every ``details["reason"]`` of a ``recipient_invalid`` (and the matching ``failure_reason`` of
#: an order the upstream refused for its recipient).
RECIPIENT_REFUSAL_REASONS = ("not_found", "not_a_user", "already_premium", "not_eligible")

#: Every ``details["reason"]`` of a ``statement_not_found``.
STATEMENT_UNAVAILABLE_REASONS = ("not_begun", "before_account")


class RecipientInvalid(InvalidRequestError):
    """400 ``recipient_invalid``: the username is malformed, unknown or cannot receive the product."""

    @property
    def reason(self) -> Optional[str]:
        """Why: ``not_found`` (also for a malformed username), ``not_a_user`` (a bot, channel or
        group), ``already_premium`` (cannot be gifted Premium now) or ``not_eligible``; None from
        a service that does not say."""
        value = (self.details or {}).get("reason")
        return value if isinstance(value, str) and value in RECIPIENT_REFUSAL_REASONS else None


class IdempotencyKeyRequired(InvalidRequestError):
    """400 ``idempotency_key_required``."""


class IdempotencyKeyInvalid(InvalidRequestError):
    """400 ``idempotency_key_invalid``: empty or longer than 255 characters."""


class InvalidJson(InvalidRequestError):
    """400 ``invalid_json``."""


class InvalidRequest(InvalidRequestError):
    """400 ``invalid_request``: a missing or unknown field or a malformed parameter (``param``)."""


class InvalidProduct(InvalidRequestError):
    """400 ``invalid_product``."""


class InvalidQuantity(InvalidRequestError):
    """400 ``invalid_quantity``."""


class InvalidExternalId(InvalidRequestError):
    """400 ``invalid_external_id``."""


class MissingApiKey(AuthenticationError):
    """401 ``missing_api_key``."""


class InvalidApiKey(AuthenticationError):
    """401 ``invalid_api_key``."""


class ApiKeyRevoked(AuthenticationError):
    """401 ``api_key_revoked``."""


class AccountDisabled(AuthenticationError):
    """401 ``account_disabled``."""


class LiveKeyRequired(PermissionDeniedError):
    """403 ``live_key_required``."""


class TestKeyRequired(PermissionDeniedError):
    """403 ``test_key_required``."""

    __test__ = False  # not a test case, whatever its name


class EmailUnverified(PermissionDeniedError):
    """403 ``email_unverified``: the live key waits for an owner's verified e-mail address."""


class QuoteExpired(ConflictError):
    """409 ``quote_expired``: ask for a new quote."""


class QuoteMismatch(InvalidRequestError):
    """400 ``quote_mismatch``: the quote is for another order, or was used."""


class OrderNotFound(NotFoundError):
    """404 ``order_not_found``."""


class StatementNotFound(NotFoundError):
    """404 ``statement_not_found``: the month has not begun, or ended before the account was
    created; ``reason`` says which (``not_begun`` or ``before_account``)."""

    @property
    def reason(self) -> Optional[str]:
        value = (self.details or {}).get("reason")
        return value if isinstance(value, str) else None


class NotFound(NotFoundError):
    """404 ``not_found``: an unknown route."""


class PayloadTooLarge(InvalidRequestError):
    """413 ``payload_too_large``."""


class UnsupportedMediaType(InvalidRequestError):
    """415 ``unsupported_media_type``."""


class RateLimited(StarportError):
    """429 ``rate_limited`` (retried after Retry-After); ``retry_after`` is in seconds."""


class LiveUnavailable(UnavailableError):
    """503 ``live_unavailable``: live fulfilment or live recipient checks are not available."""


class PriceUnavailable(UnavailableError):
    """503 ``price_unavailable``: no fresh price."""


class ServiceUnavailable(UnavailableError):
    """503 ``service_unavailable``: the database cannot be reached (retried after Retry-After)."""


class RequestTimeout(StarportError):
    """408 ``request_timeout``: the request did not reach the service in time (retried)."""


class InternalError(ServerError):
    """500 ``internal_error``."""


class InvalidUrl(InvalidRequestError):
    """400 ``invalid_url`` (webhook endpoints)."""


class InvalidEvents(InvalidRequestError):
    """400 ``invalid_events`` (webhook endpoints)."""


class WebhookEndpointNotFound(NotFoundError):
    """404 ``webhook_endpoint_not_found``."""


class WebhookEndpointLimit(ConflictError):
    """409 ``webhook_endpoint_limit``: 16 endpoints per mode at most."""


# The client's own errors.
class NetworkError(StarportError):
    """No response: the connection failed or was reset (``connection_error``)."""


class NetworkTimeout(NetworkError):
    """No response within the request timeout (``timeout``)."""


class InvalidResponse(StarportError):
    """A response that is not the API's JSON (``invalid_response``)."""


class WaitTimeout(StarportError):
    """wait_for_order: the order was not final in time; ``order`` is its last known state."""

    def __init__(self, message: str, order: Optional["Order"]) -> None:
        super().__init__(message, code="wait_timeout")
        self.order = order


class WebhookVerificationError(StarportError):
    """verify_webhook: missing headers, a stale timestamp or no matching signature."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="webhook_invalid")


#: The exception class for each API error code.
ERROR_CLASSES: Dict[str, Type[StarportError]] = {
    "insufficient_balance": InsufficientBalance,
    "idempotency_conflict": IdempotencyConflict,
    "idempotency_key_in_use": IdempotencyKeyInUse,
    "recipient_invalid": RecipientInvalid,
    "idempotency_key_required": IdempotencyKeyRequired,
    "idempotency_key_invalid": IdempotencyKeyInvalid,
    "invalid_json": InvalidJson,
    "invalid_request": InvalidRequest,
    "invalid_product": InvalidProduct,
    "invalid_quantity": InvalidQuantity,
    "invalid_external_id": InvalidExternalId,
    "missing_api_key": MissingApiKey,
    "invalid_api_key": InvalidApiKey,
    "api_key_revoked": ApiKeyRevoked,
    "account_disabled": AccountDisabled,
    "live_key_required": LiveKeyRequired,
    "test_key_required": TestKeyRequired,
    "email_unverified": EmailUnverified,
    "quote_expired": QuoteExpired,
    "quote_mismatch": QuoteMismatch,
    "order_not_found": OrderNotFound,
    "statement_not_found": StatementNotFound,
    "not_found": NotFound,
    "payload_too_large": PayloadTooLarge,
    "unsupported_media_type": UnsupportedMediaType,
    "rate_limited": RateLimited,
    "live_unavailable": LiveUnavailable,
    "price_unavailable": PriceUnavailable,
    "service_unavailable": ServiceUnavailable,
    "request_timeout": RequestTimeout,
    "internal_error": InternalError,
    "invalid_url": InvalidUrl,
    "invalid_events": InvalidEvents,
    "webhook_endpoint_not_found": WebhookEndpointNotFound,
    "webhook_endpoint_limit": WebhookEndpointLimit,
}


def _class_for_status(status: int) -> Type[StarportError]:
    if status == 401:
        return AuthenticationError
    if status == 402:
        return InsufficientBalance
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status == 408:
        return RequestTimeout
    if status == 409:
        return ConflictError
    if status == 429:
        return RateLimited
    if status == 503:
        return UnavailableError
    if status >= 500:
        return ServerError
    return InvalidRequestError


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> StarportError:
    """The exception for an API error answer (by code; by status for a code this client does not know)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    code = error.get("code") if isinstance(error.get("code"), str) else "invalid_response"
    message = error.get("message") if isinstance(error.get("message"), str) else f"The service answered HTTP {status}."
    request_id = body.get("request_id") if isinstance(body, dict) and isinstance(body.get("request_id"), str) else lowered.get("request-id")
    cls = ERROR_CLASSES.get(code) or _class_for_status(status)
    return cls(
        message,
        code=code,
        status=status,
        param=error.get("param") if isinstance(error.get("param"), str) else None,
        details=error.get("details") if isinstance(error.get("details"), dict) else None,
        request_id=request_id,
        headers=headers,
        body=body,
    )
