"""The retry policy against a scripted server: what is retried (network errors, 408, 429 after
Retry-After, 5xx, idempotency_key_in_use), how often, with which Idempotency-Key, and what is
never retried (a POST without a key, other 4xx)."""

from __future__ import annotations

import re
import unittest
from decimal import Decimal

import support
from starport import (
    Deposit,
    InvalidQuantity,
    InvalidResponse,
    NetworkError,
    NetworkTimeout,
    RateLimited,
    ServiceUnavailable,
    Starport,
)

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
BALANCE = {"ok": True, "balance": {"value": "1.5", "reserved": "0", "currency": "TON"}, "mode": "test"}
ORDER = {
    "ok": True,
    "id": "ord_scripted",
    "external_id": None,
    "product": "stars",
    "recipient": "@durov",
    "quantity": 50,
    "amount": {"value": "0.25", "currency": "TON"},
    "status": "fulfillment_pending",
    "failure_reason": None,
    "created_at": "2026-11-25T21:30:00.123Z",
    "updated_at": "2026-11-25T21:30:00.123Z",
    "status_url": "http://127.0.0.1/api/v1/orders/ord_scripted",
}


class Retries(unittest.TestCase):
    def setUp(self) -> None:
        self.server = support.ScriptedServer()
        self.addCleanup(self.server.close)
        self.starport = Starport("sk_test_scripted", base_url=self.server.url, initial_retry_delay=0.01, max_retry_delay=0.05)

    def ok(self, body: dict, status: int = 200) -> dict:
        return {"status": status, "body": body}

    def test_5xx_408_409_in_use_and_network_errors_are_retried_on_a_get(self) -> None:
        self.server.script += [
            support.error_answer(500, "internal_error"),
            support.error_answer(408, "request_timeout"),
            {"drop": True},
            self.ok(BALANCE),
        ]
        balance = self.starport.get_balance()
        self.assertEqual(balance.value, Decimal("1.5"))
        self.assertEqual(balance.last_response.attempts, 4)
        self.assertEqual(len(self.server.requests), 4)

    def test_the_default_is_three_retries_then_the_last_error(self) -> None:
        self.server.fallback = support.error_answer(503, "service_unavailable", {"Retry-After": "0"})
        with self.assertRaises(ServiceUnavailable):
            self.starport.get_balance()
        self.assertEqual(len(self.server.requests), 4)

    def test_create_order_sends_one_generated_key_on_every_attempt(self) -> None:
        self.server.script += [support.error_answer(502, "bad_gateway"), support.error_answer(409, "idempotency_key_in_use"), self.ok(ORDER, 201)]
        order = self.starport.create_order("stars", "@durov", 50)
        keys = [headers["idempotency-key"] for _, _, headers, _, _ in self.server.requests]
        self.assertEqual(len(keys), 3)
        self.assertEqual(len(set(keys)), 1)
        self.assertRegex(keys[0], UUID)
        self.assertEqual(order.last_response.idempotency_key, keys[0])
        self.assertEqual(order.last_response.attempts, 3)

    def test_a_post_without_an_idempotency_key_is_never_retried(self) -> None:
        self.server.fallback = support.error_answer(503, "service_unavailable", {"Retry-After": "0"})
        with self.assertRaises(ServiceUnavailable):
            self.starport.fund_test_balance("1")
        self.server.fallback = {"drop": True}
        with self.assertRaises(NetworkError):
            self.starport.create_webhook_endpoint("https://example.com/hooks")
        self.assertEqual([(m, p) for m, p, _, _, _ in self.server.requests], [("POST", "/api/v1/test_helpers/fund"), ("POST", "/api/v1/webhook_endpoints")])
        self.assertNotIn("idempotency-key", self.server.requests[0][2])

    def test_validate_recipient_is_retried_as_it_has_no_side_effects(self) -> None:
        self.server.script += [{"drop": True}, self.ok({"ok": True, "recipient": {"username": "durov", "display_name": "Durov", "eligible": True}})]
        self.assertEqual(self.starport.validate_recipient("stars", "@durov", 50).last_response.attempts, 2)

    def test_429_waits_retry_after(self) -> None:
        self.server.script += [support.error_answer(429, "rate_limited", {"Retry-After": "1"}), self.ok(BALANCE)]
        self.assertEqual(self.starport.get_balance().last_response.attempts, 2)
        first, second = self.server.requests[0][4], self.server.requests[1][4]
        self.assertGreaterEqual(second - first, 0.95, "the retry came before Retry-After")

    def test_a_retry_after_beyond_max_retry_after_is_not_waited_for(self) -> None:
        self.server.script += [support.error_answer(429, "rate_limited", {"Retry-After": "120"})]
        with self.assertRaises(RateLimited) as caught:
            self.starport.get_balance()
        self.assertEqual(caught.exception.retry_after, 120)
        self.assertEqual(len(self.server.requests), 1)

    def test_other_4xx_are_not_retried(self) -> None:
        self.server.fallback = support.error_answer(400, "invalid_quantity", param="quantity")
        with self.assertRaises(InvalidQuantity):
            self.starport.get_quote("stars", 1)
        self.assertEqual(len(self.server.requests), 1)

    def test_an_attempt_that_times_out_is_retried_then_raises_network_timeout(self) -> None:
        self.server.fallback = {"hang": True}
        slow = Starport("sk_test_scripted", base_url=self.server.url, timeout=0.2, max_retries=1, initial_retry_delay=0.01)
        with self.assertRaises(NetworkTimeout) as caught:
            slow.get_balance()
        self.assertEqual(caught.exception.code, "timeout")
        self.assertEqual(len(self.server.requests), 2)

    def test_nothing_listening_is_a_network_error(self) -> None:
        port = self.server.server.server_address[1]
        self.server.close()
        offline = Starport("sk_test_scripted", base_url=f"http://127.0.0.1:{port}", max_retries=1, initial_retry_delay=0.01)
        with self.assertRaises(NetworkError) as caught:
            offline.get_balance()
        self.assertEqual(caught.exception.code, "connection_error")
        self.assertNotIn("sk_test_scripted", str(caught.exception))

    def test_a_success_that_is_not_json_is_an_invalid_response(self) -> None:
        self.server.script.append({"status": 200, "body": b"<html>proxy</html>"})
        with self.assertRaises(InvalidResponse):
            self.starport.get_balance()

    def test_deposit_pages_are_typed_and_followed(self) -> None:
        deposit = {
            "id": "dep_2",
            "amount": {"value": "12.000000001", "currency": "TON"},
            "status": "credited",
            "tx_hash": "ab" * 32,
            "sender": "UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E",
            "created_at": "2026-11-25T21:30:00.000Z",
            "credited_at": "2026-11-25T21:30:05.000Z",
            "explorer_url": "https://tonviewer.com/transaction/ab",
        }
        self.server.script += [self.ok({"ok": True, "object": "list", "data": [deposit], "has_more": True}), self.ok({"ok": True, "object": "list", "data": [{**deposit, "id": "dep_1"}], "has_more": False})]
        live = Starport("sk_live_scripted", base_url=self.server.url)
        deposits = list(live.list_deposits(limit=1))
        self.assertEqual([d.id for d in deposits], ["dep_2", "dep_1"])
        self.assertIsInstance(deposits[0], Deposit)
        self.assertEqual(deposits[0].amount.value, Decimal("12.000000001"))
        self.assertEqual(self.server.requests[1][1], "/api/v1/deposits?limit=1&starting_after=dep_2")


if __name__ == "__main__":
    unittest.main()
