"""verify_webhook on deliveries the running service signed (Standard Webhooks), across a
secret rotation, and what it refuses; the webhook endpoint methods."""

from __future__ import annotations

import json
import time
import unittest
from decimal import Decimal
from typing import Dict, Tuple

import support
from starport import Amount, BalanceLow, Starport, WebhookEndpoint, WebhookVerificationError, sign_webhook, verify_webhook

service: support.Service
receiver: support.Receiver


def setUpModule() -> None:
    global service, receiver
    service = support.Service(WEBHOOK_ALLOW_LOOPBACK="1")
    receiver = support.Receiver()


def tearDownModule() -> None:
    receiver.close()
    service.close()


class Webhooks(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.starport = Starport(service.account(test="10")["test_key"], base_url=service.api)

    def delivery_for(self, order_id: str, event_type: str = "order.delivered") -> Tuple[bytes, Dict[str, str], object]:
        def find() -> object:
            for body, headers, message in receiver.received:
                event = json.loads(body)
                if event["type"] == event_type and event["data"]["order"]["id"] == order_id:
                    return body, headers, message
            return None

        return support.poll_until(find, lambda found: found is not None, f"the {event_type} delivery of {order_id}")  # type: ignore[return-value]

    def test_endpoints_and_verified_deliveries_across_a_rotation(self) -> None:
        endpoint = self.starport.create_webhook_endpoint(receiver.url, events=["order.delivered"])
        self.assertIsInstance(endpoint, WebhookEndpoint)
        self.assertTrue((endpoint.secret or "").startswith("whsec_"))
        self.assertEqual((endpoint.url, endpoint.events, endpoint.mode, endpoint.status), (receiver.url, ["order.delivered"], "test", "enabled"))
        self.assertEqual(endpoint.last_response.status, 201)
        listed = self.starport.list_webhook_endpoints()
        self.assertEqual([e.id for e in listed], [endpoint.id])
        self.assertIsNone(listed[0].secret)

        order = self.starport.create_order("stars", "@pyhooks", 50)
        body, headers, message = self.delivery_for(order.id)
        event = verify_webhook(body, headers, endpoint.secret or "")
        self.assertEqual((event.type, event.order.id if event.order else None, event.order.status if event.order else None), ("order.delivered", order.id, "delivered"))
        # A case-insensitive mapping (http.client.HTTPMessage) and (name, value) pairs work too.
        self.assertEqual(verify_webhook(body, message, endpoint.secret or "").id, event.id)  # type: ignore[arg-type]
        self.assertEqual(verify_webhook(body, list(headers.items()), endpoint.secret or "").id, event.id)

        rotated = self.starport.rotate_webhook_endpoint_secret(endpoint.id)
        self.assertEqual(rotated.id, endpoint.id)
        self.assertNotEqual(rotated.secret, endpoint.secret)
        second = self.starport.create_order("stars", "@pyhooks", 50)
        body, headers, _ = self.delivery_for(second.id)
        signature = next(v for k, v in headers.items() if k.lower() == "webhook-signature")
        self.assertEqual(len(signature.split(" ")), 2, "during the grace period a delivery carries two signatures")
        for secret in (endpoint.secret, rotated.secret):
            self.assertEqual(verify_webhook(body, headers, secret or "").order.id, second.id)  # type: ignore[union-attr]

        self.assertTrue(self.starport.delete_webhook_endpoint(endpoint.id))
        self.assertEqual(self.starport.list_webhook_endpoints(), [])

    def test_what_verify_webhook_refuses(self) -> None:
        secret = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0IQ=="
        body = json.dumps({"id": "evt_1", "type": "webhook.test", "created_at": "2026-11-25T21:30:00.000Z", "data": {"endpoint_id": "we_1"}}).encode()
        headers = sign_webhook(body, secret, "msg_1")
        event = verify_webhook(body, headers, secret)
        self.assertEqual((event.type, event.order, event.data), ("webhook.test", None, {"endpoint_id": "we_1"}))


        def refused(payload: bytes, hdrs: Dict[str, str], key: str = secret, **options: float) -> str:
            with self.assertRaises(WebhookVerificationError) as caught:
                verify_webhook(payload, hdrs, key, **options)  # type: ignore[arg-type]
            self.assertEqual(caught.exception.code, "webhook_invalid")
            return str(caught.exception)

        self.assertIn("No webhook signature matches", refused(body + b" ", headers))
        self.assertIn("No webhook signature matches", refused(body, headers, "whsec_" + "b3RoZXItc2VjcmV0"))
        self.assertIn("No webhook signature matches", refused(body, {**headers, "webhook-id": "msg_2"}))
        self.assertIn("Missing", refused(body, {k: v for k, v in headers.items() if k != "webhook-signature"}))
        self.assertIn("not Unix seconds", refused(body, {**headers, "webhook-timestamp": "yesterday"}))
        now = int(headers["webhook-timestamp"])
        self.assertIn("too old", refused(body, headers, now=now + 301))
        self.assertIn("too far in the future", refused(body, headers, now=now - 301))
        self.assertEqual(verify_webhook(body, headers, secret, now=now + 300).id, "evt_1")
        self.assertIn("not \"whsec_\"", refused(body, headers, "whsec_"))
        # One good signature among several is enough; unknown versions are skipped.
        several = {**headers, "webhook-signature": "v2,abc v1,Zm9v " + headers["webhook-signature"]}
        self.assertEqual(verify_webhook(body, several, secret).id, "evt_1")
        self.assertLess(abs(int(sign_webhook(body, secret, "msg_1")["webhook-timestamp"]) - time.time()), 5)

    def test_balance_low_event(self) -> None:
        secret = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0IQ=="
        data = {"mode": "live", "available": {"value": "4.5", "currency": "TON"}, "threshold": {"value": "5", "currency": "TON"}}
        body = json.dumps({"id": "evt_2", "type": "balance.low", "created_at": "2026-11-25T21:30:00.000Z", "data": data}).encode()
        event = verify_webhook(body, sign_webhook(body, secret, "msg_2"), secret)
        self.assertEqual((event.type, event.order), ("balance.low", None))
        self.assertEqual(event.balance_low, BalanceLow(mode="live", available=Amount(Decimal("4.5"), "TON"), threshold=Amount(Decimal("5"), "TON")))


if __name__ == "__main__":
    unittest.main()
