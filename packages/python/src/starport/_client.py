"""The Starport API client: one HTTP call per method, with the retry policy of docs/api.md
(Idempotency, Rate limits, Polling) and the same behaviour as the TypeScript SDK in
packages/sdk."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, TypeVar, Union

from ._errors import (
    IdempotencyKeyInUse,
    InvalidResponse,
    NetworkError,
    NetworkTimeout,
    RateLimited,
    RequestTimeout,
    ServerError,
    StarportError,
    WaitTimeout,
    error_from_response,
)
from ._types import (
    Balance,
    BalanceEntry,
    Deposit,
    DepositAddress,
    Order,
    Prices,
    Quote,
    RecipientValidation,
    ResponseInfo,
    Statement,
    TestFunding,
    WebhookEndpoint,
)
from ._version import VERSION

T = TypeVar("T")

DEFAULT_BASE_URL = "http://127.0.0.1:3000/api/v1"
FINAL_STATUSES = ("delivered", "failed")
#: Live orders: poll every 5 to 15 seconds (docs/api.md, Polling); never faster than 5 s.
LIVE_MIN_INTERVAL = 5.0
#: Test orders finish about 2 s after creation: poll every 0.5 s, never faster than 0.1 s.
TEST_DEFAULT_INTERVAL = 0.5
TEST_MIN_INTERVAL = 0.1

#: Every operation of the API (method, path below the base URL) and the method that calls it.
#: The package's tests compare this with the OpenAPI document the service serves.
OPERATIONS: Dict[Tuple[str, str], str] = {
    ("POST", "/orders"): "create_order",
    ("GET", "/orders"): "list_orders",
    ("GET", "/orders/{id}"): "get_order",
    ("POST", "/recipients/validate"): "validate_recipient",
    ("GET", "/quote"): "get_quote",
    ("GET", "/prices"): "get_prices",
    ("GET", "/balance"): "get_balance",
    ("GET", "/balance/history"): "balance_history",
    ("GET", "/statements/{month}"): "get_statement",
    ("GET", "/deposits"): "list_deposits",
    ("GET", "/deposit_address"): "get_deposit_address",
    ("POST", "/webhook_endpoints"): "create_webhook_endpoint",
    ("GET", "/webhook_endpoints"): "list_webhook_endpoints",
    ("DELETE", "/webhook_endpoints/{id}"): "delete_webhook_endpoint",
    ("POST", "/webhook_endpoints/{id}/rotate_secret"): "rotate_webhook_endpoint_secret",
    ("POST", "/test_helpers/fund"): "fund_test_balance",
}

TimeFilter = Union[datetime, str, int, float]


def _time_param(value: Optional[TimeFilter]) -> Optional[str]:
    """A datetime or Unix seconds as the API's RFC 3339 (UTC); strings pass through."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    else:
        moment = datetime.fromtimestamp(value, tz=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _normalize_base_url(raw: str) -> str:
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f'Starport: base_url must be an http(s) URL such as "{DEFAULT_BASE_URL}", not {raw!r}.')
    path = parts.path.rstrip("/") or "/api/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def _parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delta-seconds or an HTTP date."""
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # the API never redirects
        return None


class Starport:
    """A client for the Starport API.

    >>> starport = Starport("sk_test_…", base_url="https://starport.example.com/api/v1")
    >>> order = starport.create_order("stars", "@durov", 50)
    >>> final = starport.wait_for_order(order.id)

    ``timeout`` is per attempt, in seconds; ``max_retries`` counts retries after the first
    attempt, for network errors, 408, 429 (after Retry-After) and 5xx — for GETs, for POSTs
    with an Idempotency-Key (create_order) and for validate_recipient (no side effects); never
    for any other POST. Backoff: ``initial_retry_delay`` doubling per retry with jitter, up to
    ``max_retry_delay``; a Retry-After longer than ``max_retry_after`` is not waited for.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 30,
        max_retries: int = 3,
        *,
        initial_retry_delay: float = 0.5,
        max_retry_delay: float = 8.0,
        max_retry_after: float = 60.0,
    ) -> None:
        if not api_key:
            raise ValueError("Starport: api_key is required (sk_live_… or sk_test_…).")
        self._api_key = api_key
        #: ``"test"`` for an ``sk_test_`` key, else ``"live"`` (from the key's prefix).
        self.mode = "test" if api_key.startswith("sk_test_") else "live"
        self.base_url = _normalize_base_url(base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.initial_retry_delay = initial_retry_delay
        self.max_retry_delay = max_retry_delay
        self.max_retry_after = max_retry_after
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:  # never the key
        return f"Starport(mode={self.mode!r}, base_url={self.base_url!r})"

    # --- Orders -------------------------------------------------------------------------

    def validate_recipient(self, product: str, recipient: str, quantity: int) -> RecipientValidation:
        """POST /recipients/validate: returns when the recipient can receive the product, else
        raises RecipientInvalid. Retried like a GET (it has no side effects)."""
        body, info = self.request("POST", "/recipients/validate", body={"product": product, "recipient": recipient, "quantity": quantity}, safe=True)
        return RecipientValidation.from_json(body, info)

    def get_quote(self, product: str, quantity: int) -> Quote:
        """GET /quote: what the order would cost now, and a quote id that locks that price."""
        body, info = self.request("GET", "/quote", query={"product": product, "quantity": quantity})
        return Quote.from_json(body, info)

    def get_prices(self) -> Prices:
        """GET /prices: this account's prices in the key's mode, its volume tier and what the next tier needs."""
        body, info = self.request("GET", "/prices")
        return Prices.from_json(body, info)

    def create_order(
        self,
        product: str,
        recipient: str,
        quantity: int,
        external_id: Optional[str] = None,
        quote_id: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Order:
        """POST /orders: reserves the price and queues the order (``fulfillment_pending``).

        Every attempt carries the same Idempotency-Key (yours, or a random UUID generated once
        for this call), so the client's retries create at most one order;
        ``order.last_response.replayed`` is True when the service returned the order an earlier
        request with this key created. To survive a crash of your own process, derive the key
        from your own order and store it before calling.
        """
        params: Dict[str, Any] = {"product": product, "recipient": recipient, "quantity": quantity}
        if external_id is not None:
            params["external_id"] = external_id
        if quote_id is not None:
            params["quote_id"] = quote_id
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        body, info = self.request("POST", "/orders", body=params, idempotency_key=key)
        return Order.from_json(body, info)

    def get_order(self, order_id: str) -> Order:
        """GET /orders/{id}: the order with its events."""
        body, info = self.request("GET", f"/orders/{urllib.parse.quote(order_id, safe='')}")
        return Order.from_json(body, info)

    def poll_interval(self, requested: Optional[float] = None) -> float:
        """The interval wait_for_order uses: 5 s with a live key (never less), 0.5 s with a test key (never less than 0.1 s)."""
        if self.mode == "live":
            return max(LIVE_MIN_INTERVAL, requested if requested is not None else LIVE_MIN_INTERVAL)
        return max(TEST_MIN_INTERVAL, requested if requested is not None else TEST_DEFAULT_INTERVAL)

    def wait_for_order(
        self,
        order_id: str,
        timeout: float = 300,
        interval: Optional[float] = None,
        on_poll: Optional[Callable[[Order], None]] = None,
    ) -> Order:
        """Polls GET /orders/{id} until the order is ``delivered`` or ``failed`` and returns it.

        Transient failures while polling (network, 429, 5xx) are waited out until ``timeout``
        seconds have passed; then WaitTimeout (with the last order seen) is raised.
        """
        step = self.poll_interval(interval)
        deadline = time.monotonic() + timeout
        last: Optional[Order] = None
        while True:
            try:
                order = self.get_order(order_id)
                last = order
                if on_poll is not None:
                    on_poll(order)
                if order.status in FINAL_STATUSES:
                    return order
            except (NetworkError, RateLimited, ServerError):
                pass
            if time.monotonic() + step > deadline:
                seen = f" (last status: {last.status})" if last is not None else ""
                raise WaitTimeout(f"Order {order_id} was not delivered or failed within {timeout} s{seen}.", last)
            time.sleep(step)

    def list_orders(
        self,
        *,
        status: Optional[str] = None,
        external_id: Optional[str] = None,
        created_gte: Optional[TimeFilter] = None,
        created_lt: Optional[TimeFilter] = None,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
    ) -> Iterator[Order]:
        """GET /orders: every order of the key's mode matching the filters, newest first,
        fetching pages of ``limit`` (1–100, default 20) as you iterate. ``created_gte``
        (inclusive) and ``created_lt`` (exclusive) take a datetime, Unix seconds or RFC 3339."""
        query = {"status": status, "external_id": external_id, "created[gte]": _time_param(created_gte), "created[lt]": _time_param(created_lt), "limit": limit}
        return self._paginate("/orders", query, starting_after, lambda item: Order.from_json(item))

    # --- Balance ------------------------------------------------------------------------

    def get_balance(self) -> Balance:
        """GET /balance: the balance of the key's mode."""
        body, info = self.request("GET", "/balance")
        return Balance.from_json(body, info)

    def balance_history(self, *, limit: Optional[int] = None, starting_after: Optional[str] = None) -> Iterator[BalanceEntry]:
        """GET /balance/history: every movement of the balance of the key's mode, newest first, paging as you iterate."""
        return self._paginate("/balance/history", {"limit": limit}, starting_after, BalanceEntry.from_json)

    def get_statement(self, month: str) -> Statement:
        """GET /statements/{month}: the statement of the key's balance for a calendar month in UTC,
        ``month`` written ``YYYY-MM``. A month not begun or before the account raises
        StatementNotFound (``reason``)."""
        body, info = self.request("GET", f"/statements/{urllib.parse.quote(month, safe='')}")
        return Statement.from_json(body, info)

    def list_deposits(self, *, limit: Optional[int] = None, starting_after: Optional[str] = None) -> Iterator[Deposit]:
        """GET /deposits (live keys only): TON transfers credited to the live balance, newest first, paging as you iterate."""
        return self._paginate("/deposits", {"limit": limit}, starting_after, Deposit.from_json)

    def get_deposit_address(self) -> DepositAddress:
        """GET /deposit_address (live keys only): the deposit wallet and this account's memo."""
        body, info = self.request("GET", "/deposit_address")
        return DepositAddress.from_json(body, info)

    def fund_test_balance(self, amount: Union[Decimal, str, int]) -> TestFunding:
        """POST /test_helpers/fund (test keys only): credits the test balance. Not idempotent,
        so never retried. ``amount`` is TON (a Decimal, a decimal string or an int), never a float."""
        if isinstance(amount, float):
            raise TypeError("Starport: amount must be a Decimal, a decimal string or an int, not a float.")
        body, info = self.request("POST", "/test_helpers/fund", body={"amount": str(amount)})
        return TestFunding.from_json(body, info)

    # --- Webhook endpoints --------------------------------------------------------------

    def create_webhook_endpoint(self, url: str, events: Optional[List[str]] = None) -> WebhookEndpoint:
        """POST /webhook_endpoints: order events of the key's mode are POSTed to ``url``. The
        answer's ``secret`` is shown only here: store it for verify_webhook. Not retried."""
        params: Dict[str, Any] = {"url": url}
        if events is not None:
            params["events"] = list(events)
        body, info = self.request("POST", "/webhook_endpoints", body=params)
        return WebhookEndpoint.from_json(body, info)

    def list_webhook_endpoints(self) -> List[WebhookEndpoint]:
        """GET /webhook_endpoints: the endpoints of the key's mode, oldest first (without secrets)."""
        body, info = self.request("GET", "/webhook_endpoints")
        return [WebhookEndpoint.from_json(item, info) for item in body["data"]]

    def delete_webhook_endpoint(self, endpoint_id: str) -> bool:
        """DELETE /webhook_endpoints/{id}: stops deliveries; True once deleted."""
        body, _ = self.request("DELETE", f"/webhook_endpoints/{urllib.parse.quote(endpoint_id, safe='')}")
        return body.get("deleted") is True

    def rotate_webhook_endpoint_secret(self, endpoint_id: str) -> WebhookEndpoint:
        """POST /webhook_endpoints/{id}/rotate_secret: a new secret (in the answer only); the old
        one keeps signing alongside it for 24 hours."""
        body, info = self.request("POST", f"/webhook_endpoints/{urllib.parse.quote(endpoint_id, safe='')}/rotate_secret", body={})
        return WebhookEndpoint.from_json(body, info)

    # --- The HTTP layer -----------------------------------------------------------------

    def _paginate(self, path: str, query: Dict[str, Any], starting_after: Optional[str], make: Callable[[Dict[str, Any]], T]) -> Iterator[T]:
        after = starting_after
        while True:
            page, _ = self.request("GET", path, query={**query, "starting_after": after})
            data = page.get("data")
            if not isinstance(data, list):
                raise InvalidResponse(f"Expected a list from GET {path}.", code="invalid_response")
            for item in data:
                yield make(item)
            if not page.get("has_more") or not data:
                return
            after = data[-1]["id"]

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        safe: bool = False,
        max_retries: Optional[int] = None,
        timeout: Optional[float] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Tuple[Dict[str, Any], ResponseInfo]:
        """One API call with the retry policy; returns the answer's JSON (without ``ok``) and
        the HTTP details. Raises the StarportError subclass of the answer's error code.

        Retried: network errors, 408, 429 (after Retry-After), 5xx and 409
        ``idempotency_key_in_use``, with exponential backoff and jitter — for GETs, requests
        with an Idempotency-Key (the same key on every attempt) and ``safe`` calls; never for
        any other POST (or a DELETE). ``headers`` are added to (or replace) the client's own.
        """
        url = self.base_url + path
        params = {name: str(value) for name, value in (query or {}).items() if value is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        sent = {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json",
            "User-Agent": f"starport-python/{VERSION}",
        }
        data = None
        if body is not None:
            sent["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        if idempotency_key is not None:
            sent["Idempotency-Key"] = idempotency_key
        sent.update(headers or {})
        retryable = method == "GET" or idempotency_key is not None or safe
        retries = (self.max_retries if max_retries is None else max_retries) if retryable else 0
        attempt_timeout = self.timeout if timeout is None else timeout

        attempt = 0
        while True:
            try:
                status, response_headers, text = self._send(method, url, sent, data, attempt_timeout, path)
            except NetworkError:
                if attempt < retries:
                    time.sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise
            lowered = {k.lower(): v for k, v in response_headers.items()}
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = None
            if 200 <= status < 300:
                if not isinstance(parsed, dict):
                    raise InvalidResponse(
                        f"Expected a JSON object from {method} {path}, got: {text[:200]}",
                        code="invalid_response",
                        status=status,
                        request_id=lowered.get("request-id"),
                        headers=response_headers,
                    )
                parsed.pop("ok", None)
                info = ResponseInfo(
                    status=status,
                    request_id=lowered.get("request-id"),
                    headers=response_headers,
                    idempotency_key=idempotency_key,
                    replayed=lowered.get("idempotent-replayed") == "true",
                    attempts=attempt + 1,
                )
                return parsed, info
            error = error_from_response(status, parsed, response_headers)
            delay = self._retry_delay(error, attempt)
            if attempt < retries and delay is not None:
                time.sleep(delay)
                attempt += 1
                continue
            raise error

    def _retry_delay(self, error: StarportError, attempt: int) -> Optional[float]:
        """How long to wait before retrying after ``error``, or None not to retry it."""
        retry_after = _parse_retry_after(error._header("retry-after"))
        if isinstance(error, RateLimited):
            wait = retry_after if retry_after is not None else self._backoff(attempt)
            return None if wait > self.max_retry_after else wait
        if isinstance(error, (ServerError, IdempotencyKeyInUse, RequestTimeout)):
            if retry_after is not None and retry_after <= self.max_retry_after:
                return max(retry_after, self._backoff(attempt))
            return self._backoff(attempt)
        return None

    def _backoff(self, attempt: int) -> float:
        """A random delay between half and all of initial × 2^attempt (capped)."""
        ceiling = min(self.max_retry_delay, self.initial_retry_delay * 2**attempt)
        return ceiling / 2 + random.random() * (ceiling / 2)

    def _send(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes], timeout: float, path: str) -> Tuple[int, Dict[str, str], str]:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return response.status, dict(response.headers.items()), response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as answer:
            try:
                text = answer.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            finally:
                answer.close()
            return answer.code, dict(answer.headers.items()), text
        except (socket.timeout, TimeoutError) as error:
            raise NetworkTimeout(f"No response from {method} {path} within {timeout} s.", code="timeout") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, (socket.timeout, TimeoutError)):
                raise NetworkTimeout(f"No response from {method} {path} within {timeout} s.", code="timeout") from error
            raise NetworkError(f"Could not reach {self.base_url}: {error.reason}", code="connection_error") from error
        except (OSError, http.client.HTTPException) as error:
            raise NetworkError(f"Could not reach {self.base_url}: {error!r}", code="connection_error") from error
