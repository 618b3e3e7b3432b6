"""Every method of the client against a real running service (SQLite), over HTTP."""

from __future__ import annotations

import re
import unittest
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import support
from starport import (
    Amount,
    Balance,
    BalanceEntry,
    InvalidRequest,
    Order,
    PermissionDeniedError,
    PriceLine,
    Prices,
    Quote,
    Starport,
    Statement,
    StatementNotFound,
    WaitTimeout,
)

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
service: support.Service


def setUpModule() -> None:
    global service
    service = support.Service(TEST_SLOW_DELAY_MS="60000")


def tearDownModule() -> None:
    service.close()


def client(key: str, **options: float) -> Starport:
    return Starport(key, base_url=service.api, initial_retry_delay=0.01, max_retry_delay=0.05, **options)  # type: ignore[arg-type]


class Construction(unittest.TestCase):
    def test_mode_from_the_key_prefix_and_base_url_forms(self) -> None:
        self.assertEqual(Starport("sk_test_abc").mode, "test")
        self.assertEqual(Starport("sk_live_abc").mode, "live")
        self.assertEqual(Starport("sk_test_abc").base_url, "http://127.0.0.1:3000/api/v1")
        self.assertEqual(Starport("sk_test_abc", base_url=service.url).base_url, service.api)
        self.assertEqual(Starport("sk_test_abc", base_url=service.api + "/").base_url, service.api)
        self.assertNotIn("sk_test_abc", repr(Starport("sk_test_abc")))
        with self.assertRaises(ValueError):
            Starport("")
        with self.assertRaises(ValueError):
            Starport("sk_test_abc", base_url="ftp://example")


class Methods(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.account = service.account()
        cls.starport = client(cls.account["test_key"])
        cls.live = client(cls.account["live_key"])
        funding = cls.starport.fund_test_balance(Decimal("100"))
        cls.funding = funding

    def test_fund_test_balance_and_get_balance(self) -> None:
        self.assertEqual(self.funding.entry.type, "deposit")
        self.assertEqual(self.funding.entry.amount, Decimal("100"))
        self.assertIsNotNone(self.funding.entry.deposit_reference)
        self.assertEqual(self.funding.last_response.attempts, 1)
        balance = client(service.account()["test_key"]).get_balance()
        self.assertEqual(balance, Balance(value=Decimal("0"), reserved=Decimal("0"), currency="TON", mode="test"))
        self.assertRegex(balance.last_response.request_id or "", r"^req_")
        with self.assertRaises(TypeError):
            self.starport.fund_test_balance(1.5)  # type: ignore[arg-type]

    def test_get_quote_keeps_money_as_decimal(self) -> None:
        quote = self.starport.get_quote("stars", 50)
        self.assertIsInstance(quote, Quote)
        self.assertEqual((quote.product, quote.quantity, quote.amount.currency), ("stars", 50, "TON"))
        self.assertIsInstance(quote.amount.value, Decimal)
        self.assertEqual(quote.amount.value, Decimal("0.25"))
        self.assertEqual(self.starport.get_quote("premium", 3).amount.value, Decimal("3.996666667"))
        self.assertGreater(quote.expires_at, datetime.now(timezone.utc))

    def test_get_prices_keeps_money_as_decimal(self) -> None:
        prices = client(service.account()["test_key"]).get_prices()
        self.assertIsInstance(prices, Prices)
        self.assertEqual((prices.mode, prices.tier, prices.tiers, prices.next_tier), ("test", 1, 1, None))
        self.assertEqual(prices.volume.value, Decimal("0"))
        self.assertEqual(prices.prices[0], PriceLine("stars", "an integer from 50 to 10000", 50, 10000, Amount(Decimal("0.005"), "TON")))
        self.assertEqual([(p.product, p.min_quantity, p.unit_price.value) for p in prices.prices[1:]], [
            ("premium", 3, Decimal("3.996666667")),
            ("premium", 6, Decimal("5.33")),
            ("premium", 12, Decimal("9.663333334")),
        ])

    def test_validate_recipient(self) -> None:
        result = self.starport.validate_recipient("stars", "@Durov", 50)
        self.assertEqual((result.username, result.display_name, result.eligible), ("Durov", "Durov", True))

    def test_create_order_generates_a_key_and_get_order_reads_it_back(self) -> None:
        order = self.starport.create_order("stars", "@durov", 50, external_id="invoice-1")
        self.assertIsInstance(order, Order)
        self.assertRegex(order.id, r"^ord_")
        self.assertEqual((order.product, order.recipient, order.quantity, order.external_id), ("stars", "@durov", 50, "invoice-1"))
        self.assertEqual(order.amount.value, Decimal("0.25"))
        self.assertEqual(order.status, "fulfillment_pending")
        self.assertIsNone(order.events)
        self.assertEqual(order.status_url, f"{service.api}/orders/{order.id}")
        self.assertEqual(order.last_response.status, 201)
        self.assertFalse(order.last_response.replayed)
        self.assertRegex(order.last_response.idempotency_key or "", UUID)
        read = self.starport.get_order(order.id)
        self.assertEqual(read.id, order.id)
        self.assertEqual(read.events[0].type, "order.created")
        self.assertEqual(read.events[0].data, {"amount": "0.25"})

    def test_create_order_with_a_key_replays_and_with_a_quote_is_charged_the_quote(self) -> None:
        key = f"py-order-{datetime.now().timestamp()}"
        first = self.starport.create_order("premium", "durov", 6, idempotency_key=key)
        again = self.starport.create_order("premium", "durov", 6, idempotency_key=key)
        self.assertEqual(again.id, first.id)
        self.assertEqual(first.last_response.idempotency_key, key)
        self.assertTrue(again.last_response.replayed)
        quote = self.starport.get_quote("stars", 100)
        locked = self.starport.create_order("stars", "@durov", 100, quote_id=quote.id)
        self.assertEqual(locked.amount, quote.amount)

    def test_wait_for_order_returns_the_final_order(self) -> None:
        seen = []
        delivered = self.starport.wait_for_order(self.starport.create_order("stars", "@pywait", 50).id, timeout=30, on_poll=seen.append)
        self.assertEqual(delivered.status, "delivered")
        self.assertTrue(delivered.is_final)
        self.assertEqual(delivered.events[-1].type, "order.delivered")
        self.assertEqual(seen[-1], delivered)
        failed = self.starport.wait_for_order(self.starport.create_order("stars", "@test_failed", 50).id, timeout=30)
        self.assertEqual(failed.status, "failed")
        self.assertIsNotNone(failed.failure_reason)

    def test_wait_for_order_raises_wait_timeout_with_the_last_order(self) -> None:
        order = self.starport.create_order("stars", "@test_slow", 50)
        with self.assertRaises(WaitTimeout) as caught:
            self.starport.wait_for_order(order.id, timeout=0.5, interval=0.1)
        self.assertEqual(caught.exception.code, "wait_timeout")
        self.assertEqual(caught.exception.order.id, order.id)
        self.assertFalse(caught.exception.order.is_final)

    def test_poll_intervals_follow_the_documented_guidance(self) -> None:
        self.assertEqual(self.starport.poll_interval(), 0.5)
        self.assertEqual(self.starport.poll_interval(0.01), 0.1)
        self.assertEqual(self.live.poll_interval(), 5.0)
        self.assertEqual(self.live.poll_interval(1), 5.0)
        self.assertEqual(self.live.poll_interval(15), 15)

    def test_list_orders_pages_by_itself_with_filters(self) -> None:
        account = service.account(test="10")
        starport = client(account["test_key"])
        before = datetime.now(timezone.utc) - timedelta(seconds=1)
        ids = [starport.create_order("stars", "@pylist", 50, external_id="batch-a" if i % 2 == 0 else "batch-b").id for i in range(5)]
        pages = []
        original = starport.request

        def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
            pages.append(kwargs.get("query"))
            return original(*args, **kwargs)

        starport.request = counting  # type: ignore[method-assign]
        listed = list(starport.list_orders(limit=2))
        self.assertEqual([o.id for o in listed], list(reversed(ids)))
        self.assertEqual(len(pages), 3)
        self.assertEqual(pages[1]["starting_after"], listed[1].id)
        self.assertEqual([o.id for o in starport.list_orders(external_id="batch-a")], [ids[4], ids[2], ids[0]])
        self.assertEqual(len(list(starport.list_orders(created_gte=before, created_lt=datetime.now(timezone.utc) + timedelta(seconds=5)))), 5)
        self.assertEqual(list(starport.list_orders(created_lt=before)), [])
        self.assertEqual(list(starport.list_orders(status="delivered", limit=100)), [])
        self.assertEqual([o.id for o in starport.list_orders(starting_after=ids[1])], [ids[0]])

    def test_balance_history_pages_by_itself(self) -> None:
        account = service.account()
        starport = client(account["test_key"])
        for amount in ("1", "2", "3"):
            starport.fund_test_balance(amount)
        starport.create_order("stars", "@pyhistory", 50)
        entries = list(starport.balance_history(limit=2))
        self.assertTrue(all(isinstance(e, BalanceEntry) for e in entries))
        self.assertEqual([e.type for e in entries], ["reserve", "deposit", "deposit", "deposit"])
        self.assertEqual([e.amount for e in entries[1:]], [Decimal("3"), Decimal("2"), Decimal("1")])
        self.assertEqual(entries[0].reserved_change, Decimal("0.25"))
        self.assertEqual(entries[0].balance_after.value, Decimal("5.75"))
        self.assertIsNotNone(entries[0].order_id)

    def test_get_statement_of_the_current_month(self) -> None:
        account = service.account()
        starport = client(account["test_key"])
        starport.fund_test_balance("5")
        starport.create_order("stars", "@pystatement", 50)
        now = datetime.now(timezone.utc)
        statement = starport.get_statement(f"{now.year:04d}-{now.month:02d}")
        self.assertIsInstance(statement, Statement)
        self.assertEqual((statement.mode, statement.complete), ("test", False))
        self.assertEqual(statement.deposits, Decimal("5"))
        self.assertEqual(statement.orders_placed, Decimal("0.25"))
        self.assertEqual(statement.opening_balance.value, Decimal("0"))
        closing = statement.closing_balance
        self.assertEqual(closing.value + closing.reserved, Decimal("5") - statement.orders_delivered)
        with self.assertRaises(StatementNotFound) as raised:
            starport.get_statement("2099-01")
        self.assertEqual((raised.exception.status, raised.exception.reason), (404, "not_begun"))
        with self.assertRaises(InvalidRequest):
            starport.get_statement("2026-13")

    def test_list_deposits_and_deposit_address_with_a_live_key(self) -> None:
        deposits = self.live.list_deposits(limit=5)
        self.assertEqual(list(deposits), [])
        address = self.live.get_deposit_address()
        self.assertEqual(address.network, "mainnet")
        self.assertTrue(address.transfer_link.startswith("ton://transfer/"))
        self.assertIn(address.memo, address.transfer_link)
        with self.assertRaises(PermissionDeniedError):
            list(self.starport.list_deposits())


if __name__ == "__main__":
    unittest.main()
