"""Buys 50 test Stars end to end with the Starport Python package.

    pip install ./packages/python          # once, from this repository
    STARPORT_API_KEY=sk_test_… STARPORT_BASE_URL=http://127.0.0.1:3000/api/v1 python3 examples/first_order.py [@recipient]

Try @test_failed as the recipient to see a failure, or @test_invalid to see a refused check.
The same walk as examples/first-order.mjs.
"""

import os
import sys
import uuid

from starport import InsufficientBalance, RecipientInvalid, Starport, StarportError


def main() -> int:
    api_key = os.environ.get("STARPORT_API_KEY", "")
    base_url = os.environ.get("STARPORT_BASE_URL", "http://127.0.0.1:3000/api/v1")
    recipient = sys.argv[1] if len(sys.argv) > 1 else "@durov"
    if not api_key.startswith("sk_test_"):
        print("Set STARPORT_API_KEY to a test key (sk_test_…): this example buys test Stars.", file=sys.stderr)
        return 2

    starport = Starport(api_key, base_url=base_url)
    try:
        balance = starport.get_balance()
        print(f"Test balance: {balance.value} TON available, {balance.reserved} TON reserved")

        checked = starport.validate_recipient("stars", recipient, 50)
        print(f"Recipient @{checked.username} ({checked.display_name}) can receive Stars")

        quote = starport.get_quote("stars", 50)
        print(f"50 Stars cost {quote.amount.value} {quote.amount.currency} right now")

        # One Idempotency-Key per order. Store it with your own order before sending: sending the
        # same key again (after a crash or a timeout) returns the same order instead of buying twice.
        idempotency_key = f"first-order-{uuid.uuid4()}"
        order = starport.create_order("stars", recipient, 50, external_id="first-order", idempotency_key=idempotency_key)
        print(f"Created {order.id}: {order.status}, {order.amount.value} TON reserved")

        # Test orders settle in about 2 s; wait_for_order polls every 0.5 s with a test key (5 s with a live key).
        final = starport.wait_for_order(order.id, timeout=60, on_poll=lambda o: print(f"  … {o.status}"))
        reason = f" ({final.failure_reason})" if final.failure_reason else ""
        print(f"Order {final.id} is {final.status}{reason}")
        for event in final.events or []:
            print(f"  {event.created_at.isoformat()}  {event.type}")

        after = starport.get_balance()
        print(f"Test balance now: {after.value} TON available, {after.reserved} TON reserved")
        return 0 if final.status == "delivered" else 1
    except InsufficientBalance as error:
        print(f"Not enough test balance: {error.available} TON available, {error.required} TON needed. Credit the test balance first.", file=sys.stderr)
    except RecipientInvalid as error:
        print(f"{recipient} cannot receive Stars ({error.reason or 'no reason given'}): {error.message}", file=sys.stderr)
    except StarportError as error:
        print(f"Starport error {error.status or ''} {error.code}: {error.message} (request {error.request_id or 'n/a'})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
