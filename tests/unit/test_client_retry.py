"""The Python client's retry schedule: the service's Retry-After, clamped, or a doubling
backoff; the same rule as the plugin's delivery.inc."""

from __future__ import annotations

from synelo.client.api import retry_after_seconds
from synelo.client.delivery import retry_delay


def test_retry_delays() -> None:
    assert retry_delay(1, None) == 5.0 and retry_delay(2, None) == 10.0
    assert retry_delay(7, None) == 300.0 and retry_delay(40, None) == 300.0
    assert retry_delay(3, 30.0) == 30.0
    assert retry_delay(1, 0.0) == 1.0 and retry_delay(1, 10_000.0) == 300.0
    assert retry_after_seconds(" 12 ") == 12.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert retry_after_seconds("1.5") is None and retry_after_seconds(None) is None
