"""Which address a request is counted against: X-Forwarded-For is believed only from a
trusted proxy, and then only its right-most hop that is not itself a trusted proxy."""

from __future__ import annotations

import pytest

from synelo.service.middleware.ratelimit import Rate, TrustedProxies, client_address, retry_after

PROXIES = TrustedProxies(["10.0.0.0/8", "192.0.2.1", "2001:db8:ffff::/48"])


def scope(peer: str, *forwarded: str) -> dict:
    return {
        "client": (peer, 40000),
        "headers": [(b"x-forwarded-for", f.encode()) for f in forwarded],
    }


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # an untrusted peer: its own address, whatever it writes
        ("198.51.100.7", ["203.0.113.1"], "198.51.100.7"),
        # a trusted proxy: the hop it appended; what the client wrote left of it is ignored
        ("192.0.2.1", ["203.0.113.1, 198.51.100.7"], "198.51.100.7"),
        # a chain of trusted proxies (a network, an address) is skipped from the right
        ("10.1.2.3", ["203.0.113.1, 198.51.100.7, 192.0.2.1, 10.9.9.9"], "198.51.100.7"),
        # several headers are one list, in order
        ("10.1.2.3", ["203.0.113.1", "198.51.100.7"], "198.51.100.7"),
        # every hop trusted: the left-most one
        ("10.1.2.3", ["10.0.0.5, 10.0.0.6"], "10.0.0.5"),
        # a trusted proxy that sent no header: the proxy itself
        ("10.1.2.3", [], "10.1.2.3"),
        # ports some proxies write are not part of the address
        ("10.1.2.3", ["198.51.100.7:5123"], "198.51.100.7"),
        ("10.1.2.3", ["[2001:db8:1:2::9]:443"], "2001:db8:1:2::/64"),
        # IPv6 clients count by /64; IPv4 in IPv6 by the IPv4 address
        ("2001:db8:1:2::9", [], "2001:db8:1:2::/64"),
        ("2001:db8:ffff:1::1", ["2001:db8:5:6:7::1"], "2001:db8:5:6::/64"),
        ("::ffff:198.51.100.7", [], "198.51.100.7"),
        # something that is not an address stays itself (an untrusted one, then)
        ("10.1.2.3", ["unknown"], "unknown"),
    ],
)
def test_client_address(peer: str, forwarded: list[str], client: str) -> None:
    assert client_address(scope(peer, *forwarded), PROXIES) == client


def test_no_trusted_proxy_means_the_header_is_never_read() -> None:
    assert client_address(scope("127.0.0.1", "203.0.113.1"), TrustedProxies([])) == "127.0.0.1"


def test_a_bad_trusted_proxy_entry_is_refused() -> None:
    with pytest.raises(ValueError, match="SYNELO_TRUSTED_PROXIES: .proxy.example. is not"):
        TrustedProxies(["proxy.example"])


def test_burst_and_retry_after() -> None:
    assert Rate.of(None) is None
    assert Rate.of(50.0) == Rate(50.0, 50.0)  # a second's worth at once
    assert Rate.of(0.1) == Rate(0.1, 1.0)  # never less than one request
    assert [retry_after(w) for w in (0.001, 1.0, 1.2)] == ["1", "1", "2"]
