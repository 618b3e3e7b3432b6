"""Deposit as GET /deposits answers it: TON, USDT credited, and USDT waiting for a rate (the
shapes of docs/api.md "GET /deposits"; the end-to-end USDT case runs in test/deposits/api.test.ts)."""

from __future__ import annotations

import unittest
from datetime import datetime, timezone
from decimal import Decimal

import support  # noqa: F401  (puts the package on the path)
from starport import Deposit, UsdtConversion

BASE = {
    "id": "dep_1",
    "tx_hash": "a" * 64,
    "sender": "EQCzQJJBAQ-FrEFcvxO5sNxhV9CaOdK9CCfq2yCBnwZ4aJ9R",
    "created_at": "2026-11-25T21:31:00.000Z",
    "explorer_url": "https://tonviewer.com/transaction/" + "a" * 64,
}


class DepositTest(unittest.TestCase):
    def test_ton(self) -> None:
        d = Deposit.from_json({**BASE, "asset": "TON", "amount": {"value": "25", "currency": "TON"}, "usdt": None, "status": "credited", "credited_at": "2026-11-25T21:31:02.120Z"})
        self.assertEqual((d.asset, d.usdt, d.amount.value if d.amount else None), ("TON", None, Decimal("25")))

    def test_usdt_credited(self) -> None:
        d = Deposit.from_json(
            {
                **BASE,
                "asset": "USDT",
                "amount": {"value": "9.9", "currency": "TON"},
                "usdt": {"amount": "25", "rate": "2.5", "rate_at": "2026-11-25T21:31:02.118Z"},
                "status": "credited",
                "credited_at": "2026-11-25T21:31:02.120Z",
            }
        )
        self.assertEqual(d.usdt, UsdtConversion(amount=Decimal("25"), rate=Decimal("2.5"), rate_at=datetime(2026, 11, 25, 21, 31, 2, 118000, tzinfo=timezone.utc)))

    def test_usdt_awaiting_rate(self) -> None:
        d = Deposit.from_json({**BASE, "asset": "USDT", "amount": None, "usdt": {"amount": "30", "rate": None, "rate_at": None}, "status": "awaiting_rate", "credited_at": None})
        self.assertEqual((d.amount, d.credited_at, d.status), (None, None, "awaiting_rate"))
        self.assertIsNone(d.usdt.rate if d.usdt else "missing")


if __name__ == "__main__":
    unittest.main()
