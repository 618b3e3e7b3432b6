"""The API's objects as typed, immutable dataclasses. Money is ``Decimal`` (TON, at most 9
fractional digits), never a float; times are timezone-aware ``datetime``s. Each object keeps
the JSON it was made from in ``raw`` and, for results of a call, the HTTP details in
``last_response``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional


def money(value: Any) -> Decimal:
    """A TON decimal string as a Decimal (the API never sends money as a JSON number)."""
    if not isinstance(value, str):
        raise ValueError(f"expected a decimal string, got {value!r}")
    return Decimal(value)


def timestamp(value: Any) -> Optional[datetime]:
    """RFC 3339 (``2026-11-25T21:30:00.123Z``) as an aware datetime; None stays None."""
    if value is None:
        return None
    text = str(value)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class ResponseInfo:
    """What the client saw of the HTTP exchange behind a result."""

    status: int
    #: The Request-Id header: quote it to support.
    request_id: Optional[str]
    headers: Mapping[str, str]
    #: The Idempotency-Key sent (create_order), generated when none was given.
    idempotency_key: Optional[str]
    #: True when the service answered ``Idempotent-Replayed: true``.
    replayed: bool
    #: HTTP attempts it took (1 without retries).
    attempts: int


def _meta() -> Any:
    return field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Amount:
    value: Decimal
    currency: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Amount":
        return cls(value=money(data["value"]), currency=data["currency"])


@dataclass(frozen=True)
class OrderEvent:
    """One step of an order's history: ``order.created``, ``order.processing``,
    ``order.attempt_failed``, ``order.payment_sent``, ``order.delivered`` or ``order.failed``."""

    id: str
    type: str
    #: The order status after this event.
    status: str
    created_at: datetime
    data: Dict[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "OrderEvent":
        return cls(id=data["id"], type=data["type"], status=data["status"], created_at=timestamp(data["created_at"]), data=dict(data.get("data") or {}))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Order:
    """An order. ``status``: ``fulfillment_pending`` → ``processing`` → ``delivered`` | ``failed``
    (the last two are final). ``events`` (oldest first) is there when the order was read with
    get_order or wait_for_order, else None."""

    id: str
    external_id: Optional[str]
    product: str
    recipient: str
    quantity: int
    #: The price reserved at creation; it never changes.
    amount: Amount
    status: str
    failure_reason: Optional[str]
    created_at: datetime
    updated_at: datetime
    status_url: str
    events: Optional[List[OrderEvent]] = None
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @property
    def is_final(self) -> bool:
        return self.status in ("delivered", "failed")

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "Order":
        events = data.get("events")
        return cls(
            id=data["id"],
            external_id=data.get("external_id"),
            product=data["product"],
            recipient=data["recipient"],
            quantity=data["quantity"],
            amount=Amount.from_json(data["amount"]),
            status=data["status"],
            failure_reason=data.get("failure_reason"),
            created_at=timestamp(data["created_at"]),  # type: ignore[arg-type]
            updated_at=timestamp(data["updated_at"]),  # type: ignore[arg-type]
            status_url=data["status_url"],
            events=[OrderEvent.from_json(e) for e in events] if isinstance(events, list) else None,
            raw=dict(data),
            last_response=response,
        )


@dataclass(frozen=True)
class Quote:
    #: ``quo_…``: pass it as ``quote_id`` to create_order to be charged exactly ``amount``.
    id: str
    product: str
    quantity: int
    amount: Amount
    expires_at: datetime
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "Quote":
        return cls(
            id=data["id"],
            product=data["product"],
            quantity=data["quantity"],
            amount=Amount.from_json(data["amount"]),
            expires_at=timestamp(data["expires_at"]),  # type: ignore[arg-type]
            raw=dict(data),
            last_response=response,
        )


@dataclass(frozen=True)
class PriceLine:
    """One product and quantity rule of GET /prices. ``unit_price``: one star (an order of N stars
    costs at most N times it: it is priced as a whole and rounded up once), or the Premium period."""

    product: str
    quantity_rule: str
    min_quantity: int
    max_quantity: int
    unit_price: Amount

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PriceLine":
        return cls(
            product=data["product"],
            quantity_rule=data["quantity_rule"],
            min_quantity=data["min_quantity"],
            max_quantity=data["max_quantity"],
            unit_price=Amount.from_json(data["unit_price"]),
        )


@dataclass(frozen=True)
class NextTier:
    """The next volume tier: it applies from ``start`` of delivered volume; ``needs`` is what is left."""

    start: Amount
    needs: Amount


@dataclass(frozen=True)
class Prices:
    """GET /prices: the account's prices in the key's mode (its price plan's, else the service's
    markup), for display: an order is charged GET /quote's amount. ``volume`` (delivered orders,
    last 30 days) picks the tier ``tier`` of ``tiers``; ``next_tier`` is None in the last one."""

    mode: str
    prices: List[PriceLine]
    volume: Amount
    tier: int
    tiers: int
    next_tier: Optional[NextTier]
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "Prices":
        nxt = data["next_tier"]
        return cls(
            mode=data["mode"],
            prices=[PriceLine.from_json(line) for line in data["prices"]],
            volume=Amount.from_json(data["volume"]),
            tier=data["tier"]["number"],
            tiers=data["tier"]["of"],
            next_tier=None if nxt is None else NextTier(start=Amount.from_json(nxt["from"]), needs=Amount.from_json(nxt["needs"])),
            raw=dict(data),
            last_response=response,
        )


@dataclass(frozen=True)
class RecipientValidation:
    #: Without ``@``.
    username: str
    display_name: str
    eligible: bool
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "RecipientValidation":
        r = data["recipient"]
        return cls(username=r["username"], display_name=r["display_name"], eligible=r["eligible"], raw=dict(data), last_response=response)


@dataclass(frozen=True)
class BalanceSnapshot:
    value: Decimal
    reserved: Decimal
    currency: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "BalanceSnapshot":
        return cls(value=money(data["value"]), reserved=money(data["reserved"]), currency=data["currency"])


@dataclass(frozen=True)
class Balance:
    """The balance of the key's mode: ``value`` can be spent now, ``reserved`` is held by
    orders not yet final."""

    value: Decimal
    reserved: Decimal
    currency: str
    mode: str
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "Balance":
        b = data["balance"]
        return cls(value=money(b["value"]), reserved=money(b["reserved"]), currency=b["currency"], mode=data["mode"], raw=dict(data), last_response=response)


@dataclass(frozen=True)
class BalanceEntry:
    """One movement of the balance: ``deposit``, ``reserve``, ``debit``, ``release`` or ``adjustment``."""

    id: str
    type: str
    #: The signed change of the balance's value.
    amount: Decimal
    #: The signed change of the reserved amount.
    reserved_change: Decimal
    balance_after: BalanceSnapshot
    order_id: Optional[str]
    #: For a deposit: its reference (a transaction hash, or a test funding's request id).
    deposit_reference: Optional[str]
    created_at: datetime
    raw: Dict[str, Any] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "BalanceEntry":
        deposit = data.get("deposit")
        return cls(
            id=data["id"],
            type=data["type"],
            amount=money(data["amount"]),
            reserved_change=money(data["reserved_change"]),
            balance_after=BalanceSnapshot.from_json(data["balance_after"]),
            order_id=data.get("order_id"),
            deposit_reference=deposit.get("reference") if isinstance(deposit, dict) else None,
            created_at=timestamp(data["created_at"]),  # type: ignore[arg-type]
            raw=dict(data),
        )


@dataclass(frozen=True)
class Statement:
    """A monthly statement of the key's balance (GET /statements/{month}). The totals are
    Decimals; ``raw`` keeps the whole answer (each USDT deposit, each adjustment, each product).
    ``closing_balance.value`` = opening value + deposits + adjustments − placed + failed;
    ``closing_balance.reserved`` = opening reserved + placed − delivered − failed."""

    month: str
    mode: str
    period_start: datetime
    period_end: datetime
    #: False for the current month: its figures run to ``generated_at``.
    complete: bool
    generated_at: datetime
    opening_balance: BalanceSnapshot
    deposits: Decimal
    #: The USDT received this month and the TON it was credited as.
    usdt_deposits: Decimal
    usdt_deposits_ton: Decimal
    orders_placed: Decimal
    orders_delivered: Decimal
    orders_failed: Decimal
    #: Operator credits less debits.
    adjustments: Decimal
    closing_balance: BalanceSnapshot
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "Statement":
        return cls(
            month=data["month"],
            mode=data["mode"],
            period_start=timestamp(data["period_start"]),  # type: ignore[arg-type]
            period_end=timestamp(data["period_end"]),  # type: ignore[arg-type]
            complete=data["complete"],
            generated_at=timestamp(data["generated_at"]),  # type: ignore[arg-type]
            opening_balance=BalanceSnapshot.from_json(data["opening_balance"]),
            deposits=money(data["deposits"]["amount"]),
            usdt_deposits=Decimal(data["deposits"]["usdt"]["usdt"]),
            usdt_deposits_ton=money(data["deposits"]["usdt"]["amount"]),
            orders_placed=money(data["orders_placed"]["amount"]),
            orders_delivered=money(data["orders_delivered"]["amount"]),
            orders_failed=money(data["orders_failed"]["amount"]),
            adjustments=money(data["adjustments"]["net"]),
            closing_balance=BalanceSnapshot.from_json(data["closing_balance"]),
            raw=dict(data),
            last_response=response,
        )


@dataclass(frozen=True)
class TestFunding:
    """fund_test_balance's answer: the deposit entry written and the test balance after it."""

    __test__ = False  # not a test case, whatever its name

    entry: BalanceEntry
    balance: BalanceSnapshot
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "TestFunding":
        return cls(entry=BalanceEntry.from_json(data["entry"]), balance=BalanceSnapshot.from_json(data["balance"]), raw=dict(data), last_response=response)


@dataclass(frozen=True)
class UsdtConversion:
    """A USDT deposit: the USDT that arrived and the rate (USD per TON) it was converted at."""

    amount: Decimal
    #: None while the deposit waits for a rate.
    rate: Optional[Decimal]
    rate_at: Optional[datetime]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "UsdtConversion":
        rate = data.get("rate")
        return cls(amount=Decimal(data["amount"]), rate=None if rate is None else Decimal(rate), rate_at=timestamp(data.get("rate_at")))


@dataclass(frozen=True)
class Deposit:
    """A TON or USDT transfer to the live balance (``status`` ``credited``, or ``awaiting_rate`` for USDT)."""

    id: str
    #: ``TON`` or ``USDT``.
    asset: str
    #: The TON credited (USDT: converted); None while ``awaiting_rate``.
    amount: Optional[Amount]
    #: None for a TON deposit.
    usdt: Optional[UsdtConversion]
    status: str
    tx_hash: str
    sender: str
    created_at: datetime
    #: None while ``awaiting_rate``.
    credited_at: Optional[datetime]
    explorer_url: str
    raw: Dict[str, Any] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Deposit":
        amount = data.get("amount")
        usdt = data.get("usdt")
        return cls(
            id=data["id"],
            asset=data.get("asset", "TON"),
            amount=None if amount is None else Amount.from_json(amount),
            usdt=None if usdt is None else UsdtConversion.from_json(usdt),
            status=data["status"],
            tx_hash=data["tx_hash"],
            sender=data["sender"],
            created_at=timestamp(data["created_at"]),  # type: ignore[arg-type]
            credited_at=timestamp(data.get("credited_at")),
            explorer_url=data["explorer_url"],
            raw=dict(data),
        )


@dataclass(frozen=True)
class DepositAddress:
    """Where to send TON for a live top-up: every transfer must carry ``memo`` as its comment."""

    address: str
    memo: str
    network: str
    transfer_link: str
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "DepositAddress":
        return cls(address=data["address"], memo=data["memo"], network=data["network"], transfer_link=data["transfer_link"], raw=dict(data), last_response=response)


@dataclass(frozen=True)
class WebhookEndpoint:
    """A webhook endpoint. ``secret`` (``whsec_…``) is there only in the answers of
    create_webhook_endpoint and rotate_webhook_endpoint_secret."""

    id: str
    url: str
    #: Event types, or ``["*"]`` for all.
    events: List[str]
    mode: str
    status: str
    disabled_reason: Optional[str]
    created_at: datetime
    secret: Optional[str] = field(default=None, repr=False)
    raw: Dict[str, Any] = _meta()
    last_response: Optional[ResponseInfo] = _meta()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], response: Optional[ResponseInfo] = None) -> "WebhookEndpoint":
        return cls(
            id=data["id"],
            url=data["url"],
            events=list(data["events"]),
            mode=data["mode"],
            status=data["status"],
            disabled_reason=data.get("disabled_reason"),
            created_at=timestamp(data["created_at"]),  # type: ignore[arg-type]
            secret=data.get("secret"),
            raw=dict(data),
            last_response=response,
        )


@dataclass(frozen=True)
class BalanceLow:
    """The data of a ``balance.low`` event: a movement took the available balance of ``mode``
    below the low-balance threshold set in the dashboard (once per crossing)."""

    mode: str
    #: The available balance right after the movement that crossed the threshold.
    available: Amount
    threshold: Amount

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "BalanceLow":
        return cls(mode=data["mode"], available=Amount.from_json(data["available"]), threshold=Amount.from_json(data["threshold"]))


@dataclass(frozen=True)
class WebhookEvent:
    """A verified webhook delivery: an order event with the order as it stood right after it
    (``order``), a ``balance.low`` event (``balance_low``, no order), or a ``webhook.test`` event
    (``order`` and ``balance_low`` are None)."""

    id: str
    type: str
    created_at: datetime
    data: Dict[str, Any]
    order: Optional[Order]
    balance_low: Optional[BalanceLow] = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "WebhookEvent":
        body = dict(data.get("data") or {})
        order = body.get("order")
        return cls(
            id=data["id"],
            type=data["type"],
            created_at=timestamp(data["created_at"]),  # type: ignore[arg-type]
            data=body,
            order=Order.from_json(order) if isinstance(order, dict) else None,
            balance_low=BalanceLow.from_json(body) if data["type"] == "balance.low" else None,
        )
