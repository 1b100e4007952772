"""`AddressPolicy`: which URLs a fetch may reach, checked without any network.

Host names resolve through a fake resolver (a table), except where the system's own
answer for `localhost` is the point.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from loaders.addresses import AddressPolicy, CheckedTarget
from service.errors import ConfigurationError, LoaderError, UnsafeUrlError

NAMES = {
    "localhost": ["127.0.0.1", "::1"],
    "loopback.test": ["127.0.0.1"],
    "public.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "mixed-a.test": ["93.184.216.34", "10.0.0.7"],
    "mixed-aaaa.test": ["93.184.216.34", "fd12:3456::1"],
    "mapped.test": ["::ffff:192.168.1.1"],
    "metadata.test": ["169.254.169.254"],
    "internal.test": ["10.1.2.3", "192.168.1.1"],
    "empty.test": [],
}


def fake_resolver(host: str, port: int) -> Sequence[str]:
    """`NAMES` as DNS; any other name does not resolve."""
    if host not in NAMES:
        raise OSError(f"no address for {host}")
    return NAMES[host]


POLICY = AddressPolicy(resolver=fake_resolver)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "127.0.0.1 is a loopback address"),
        ("http://localhost/", "localhost resolves to 127.0.0.1, which is a loopback address"),
        ("http://LocalHost/", "localhost resolves to 127.0.0.1, which is a loopback address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://10.0.0.1/", "10.0.0.1 is a private address"),
        ("https://192.168.0.1:8443/", "192.168.0.1 is a private address"),
        ("http://172.16.5.4/", "172.16.5.4 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"),
        ("http://100.100.100.200/", "100.100.100.200 is a cloud metadata address"),
        ("http://169.254.1.1/", "169.254.1.1 is a link-local address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
        ("http://100.64.0.1/", "100.64.0.1 is a shared (carrier-grade NAT) address"),
        ("http://2130706433/", "2130706433 is 127.0.0.1, which is a loopback address"),
        ("http://0x7f.1/", "0x7f.1 is 127.0.0.1, which is a loopback address"),
        ("http://0x7F000001/", "0x7f000001 is 127.0.0.1, which is a loopback address"),
        ("http://0177.0.0.1/", "0177.0.0.1 is 127.0.0.1, which is a loopback address"),
        ("http://127.1/", "127.1 is 127.0.0.1, which is a loopback address"),
        ("http://10.1.258/", "10.1.258 is 10.1.1.2, which is a private address"),
        ("http://127.0.0.1./", "127.0.0.1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 maps to 127.0.0.1, a loopback address"),
        (
            "http://[::ffff:a9fe:a9fe]/",
            "::ffff:a9fe:a9fe maps to 169.254.169.254, a cloud metadata address",
        ),
        ("http://[2002:7f00:1::]/", "2002:7f00:1:: embeds 127.0.0.1, a loopback address"),
        ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1 embeds 10.0.0.1, a private address"),
        ("http://0.0.0.0/", "0.0.0.0 is an unspecified address"),
        ("http://0/", "0 is 0.0.0.0, which is an unspecified address"),
        ("http://[::]/", ":: is an unspecified address"),
        ("http://224.0.0.1/", "224.0.0.1 is a multicast address"),
        ("http://[ff02::1]/", "ff02::1 is a multicast address"),
        ("http://240.0.0.1/", "240.0.0.1 is a private address"),
        ("http://255.255.255.255/", "255.255.255.255 is a private address"),
        ("http://[::7f00:1]/", "::7f00:1 is a reserved address"),
        ("http://[fec0::1]/", "fec0::1 is a site-local address"),
        ("ftp://example.org/", "scheme 'ftp' is not http or https"),
        ("file:///etc/passwd", "scheme 'file' is not http or https"),
        ("gopher://127.0.0.1:6379/_INFO", "scheme 'gopher' is not http or https"),
        ("http:///index.html", "the URL has no host"),
        (
            "http://loopback.test/",
            "loopback.test resolves to 127.0.0.1, which is a loopback address",
        ),
        (
            "http://mixed-a.test/",
            "mixed-a.test resolves to 10.0.0.7, which is a private address",
        ),
        (
            "http://mixed-aaaa.test/",
            "mixed-aaaa.test resolves to fd12:3456::1, which is a private address",
        ),
        (
            "http://mapped.test/",
            "mapped.test resolves to ::ffff:192.168.1.1, which maps to 192.168.1.1, "
            "a private address",
        ),
        (
            "http://metadata.test/",
            "metadata.test resolves to 169.254.169.254, which is a cloud metadata address",
        ),
        ("http://nowhere.test/", "nowhere.test does not resolve (no address for nowhere.test)"),
        ("http://empty.test/", "empty.test resolves to no address"),
    ],
)
def test_refused(url: str, reason: str) -> None:
    with pytest.raises(UnsafeUrlError) as caught:
        POLICY.check(url)
    assert (caught.value.reason, caught.value.source, str(caught.value)) == (
        reason,
        url,
        f"{url}: {reason}",
    )
    assert isinstance(caught.value, LoaderError)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://public.test/docs/",
            CheckedTarget(
                url="http://public.test/docs/",
                scheme="http",
                host="public.test",
                port=80,
                address="93.184.216.34",
            ),
        ),
        (
            "HTTPS://Public.Test:8443/a?q=1",
            CheckedTarget(
                url="HTTPS://Public.Test:8443/a?q=1",
                scheme="https",
                host="public.test",
                port=8443,
                address="93.184.216.34",
            ),
        ),
        (
            "http://93.184.216.34/",
            CheckedTarget(
                url="http://93.184.216.34/",
                scheme="http",
                host="93.184.216.34",
                port=80,
                address="93.184.216.34",
            ),
        ),
        (
            "https://[2606:4700::1111]/",
            CheckedTarget(
                url="https://[2606:4700::1111]/",
                scheme="https",
                host="2606:4700::1111",
                port=443,
                address="2606:4700::1111",
            ),
        ),
        (
            "http://[::ffff:8.8.8.8]/",
            CheckedTarget(
                url="http://[::ffff:8.8.8.8]/",
                scheme="http",
                host="::ffff:8.8.8.8",
                port=80,
                address="8.8.8.8",
            ),
        ),
        (
            "http://[64:ff9b::808:808]/",
            CheckedTarget(
                url="http://[64:ff9b::808:808]/",
                scheme="http",
                host="64:ff9b::808:808",
                port=80,
                address="64:ff9b::808:808",
            ),
        ),
        (
            "http://134744072/",
            CheckedTarget(
                url="http://134744072/", scheme="http", host="134744072", port=80, address="8.8.8.8"
            ),
        ),
    ],
)
def test_allowed(url: str, expected: CheckedTarget) -> None:
    assert POLICY.check(url) == expected


def test_the_system_resolver_is_the_default() -> None:
    # localhost is in every hosts file: no DNS query leaves the machine.
    with pytest.raises(UnsafeUrlError) as caught:
        AddressPolicy().check("http://localhost:8000/")
    assert caught.value.reason.startswith("localhost resolves to ")
    assert caught.value.reason.endswith(", which is a loopback address")


@pytest.mark.parametrize(
    ("allow", "url", "address"),
    [
        ("Loopback.Test", "http://loopback.test/", "127.0.0.1"),
        ("loopback.test.", "http://LOOPBACK.test:81/", "127.0.0.1"),
        ("localhost", "http://localhost/", "127.0.0.1"),
        ("127.0.0.1", "http://127.0.0.1:8000/", "127.0.0.1"),
        ("127.0.0.1", "http://loopback.test/", "127.0.0.1"),
        ("127.0.0.0/8", "http://0x7f.1/", "127.0.0.1"),
        ("127.0.0.1", "http://[::ffff:127.0.0.1]/", "127.0.0.1"),
        ("::1, 127.0.0.1", "http://localhost/", "127.0.0.1"),
        ("10.0.0.0/8, 192.168.0.0/16", "http://internal.test/", "10.1.2.3"),
        (" 10.0.0.0/8 ,, mixed-a.test ", "http://mixed-a.test/", "93.184.216.34"),
        ("[::1]", "http://[::1]/", "::1"),
        ("fd00::/8", "http://mixed-aaaa.test/", "93.184.216.34"),
        ("169.254.169.254", "http://169.254.169.254/", "169.254.169.254"),
    ],
)
def test_allow_list_opens_hosts_and_networks(allow: str, url: str, address: str) -> None:
    policy = AddressPolicy.from_allow_list(allow, resolver=fake_resolver)
    assert policy.check(url).address == address


@pytest.mark.parametrize(
    ("allow", "url", "reason"),
    [
        # A host name opens that name only, not its subdomains nor its addresses for others.
        ("test", "http://loopback.test/", "loopback.test resolves to 127.0.0.1, which is a"),
        ("loopback.test", "http://127.0.0.1/", "127.0.0.1 is a loopback address"),
        # Every address must be global or allowed.
        ("10.0.0.0/8", "http://internal.test/", "internal.test resolves to 192.168.1.1, which"),
        ("127.0.0.1", "http://localhost/", "localhost resolves to ::1, which is a loopback"),
        ("127.0.0.1", "http://127.0.0.2/", "127.0.0.2 is a loopback address"),
        ("10.0.0.0/8", "ftp://10.0.0.1/", "scheme 'ftp' is not http or https"),
        ("empty.test", "http://empty.test/", "empty.test resolves to no address"),
    ],
)
def test_allow_list_opens_nothing_else(allow: str, url: str, reason: str) -> None:
    policy = AddressPolicy.from_allow_list(allow, resolver=fake_resolver)
    with pytest.raises(UnsafeUrlError) as caught:
        policy.check(url)
    assert caught.value.reason.startswith(reason)


@pytest.mark.parametrize(
    ("allow", "message"),
    [
        ("10.0.0.0/33", "allow-list entry '10.0.0.0/33': '10.0.0.0/33' does not appear to be"),
        ("docs.test:8000", "allow-list entry 'docs.test:8000' is not a host name, an IP"),
        ("http://docs.test", "allow-list entry 'http://docs.test': "),
        ("docs test", "allow-list entry 'docs test' is not a host name, an IP"),
        ("ok.test, user@docs.test", "allow-list entry 'user@docs.test' is not a host name"),
    ],
)
def test_malformed_allow_list_entries(allow: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        AddressPolicy.from_allow_list(allow)
    assert str(caught.value).startswith(message)


def test_an_empty_allow_list_allows_nothing_extra() -> None:
    assert AddressPolicy.from_allow_list(" , ") == AddressPolicy()
    assert AddressPolicy.from_allow_list("a.test, 10.0.0.0/8").allow == ("a.test", "10.0.0.0/8")


@pytest.mark.parametrize(
    ("target", "connect_url", "host_header", "extensions"),
    [
        (
            CheckedTarget(
                url="http://docs.test:8000/a/b.html?x=1",
                scheme="http",
                host="docs.test",
                port=8000,
                address="127.0.0.1",
            ),
            "http://127.0.0.1:8000/a/b.html?x=1",
            "docs.test:8000",
            {},
        ),
        (
            CheckedTarget(
                url="https://Docs.Test/a", scheme="https", host="docs.test", port=443, address="::1"
            ),
            "https://[::1]/a",
            "docs.test",
            {"sni_hostname": "docs.test"},
        ),
        (
            CheckedTarget(
                url="https://bücher.test/", scheme="https", host="xn--bcher-kva.test", port=443,
                address="93.184.216.34",
            ),
            "https://93.184.216.34/",
            "xn--bcher-kva.test",
            {"sni_hostname": "xn--bcher-kva.test"},
        ),
        (
            CheckedTarget(
                url="https://93.184.216.34/", scheme="https", host="93.184.216.34", port=443,
                address="93.184.216.34",
            ),
            "https://93.184.216.34/",
            "93.184.216.34",
            {},
        ),
    ],
)  # fmt: skip
def test_how_to_connect_to_the_checked_address(
    target: CheckedTarget, connect_url: str, host_header: str, extensions: dict[str, str]
) -> None:
    assert (target.connect_url, target.host_header, target.extensions) == (
        connect_url,
        host_header,
        extensions,
    )


def test_idna_hosts_are_checked_as_the_client_sends_them() -> None:
    seen: list[str] = []

    def resolver(host: str, port: int) -> Sequence[str]:
        seen.append(host)
        return ["93.184.216.34"]

    target = AddressPolicy(resolver=resolver).check("https://Bücher.test/")
    assert (seen, target.host) == (["xn--bcher-kva.test"], "xn--bcher-kva.test")
    allowed = AddressPolicy.from_allow_list("BÜCHER.test", resolver=lambda host, port: ["10.0.0.1"])
    assert allowed.check("http://bücher.test/").address == "10.0.0.1"


def test_each_check_resolves_once_and_a_rebound_name_is_refused() -> None:
    """A name that answers a public address, then loopback (DNS rebinding)."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    calls: list[tuple[str, int]] = []
    lock = threading.Lock()

    def rebinding(host: str, port: int) -> Sequence[str]:
        with lock:
            calls.append((host, port))
            return next(answers)

    policy = AddressPolicy(resolver=rebinding)
    assert policy.check("http://docs.test/").address == "93.184.216.34"
    assert calls == [("docs.test", 80)]
    with pytest.raises(UnsafeUrlError, match=r"docs\.test resolves to 127\.0\.0\.1, which"):
        policy.check("http://docs.test/")
    assert calls == [("docs.test", 80), ("docs.test", 80)]


def test_ip_hosts_are_never_resolved() -> None:
    def no_dns(host: str, port: int) -> Sequence[str]:
        raise AssertionError(f"resolved {host}")

    policy = AddressPolicy(resolver=no_dns)
    assert policy.check("http://8.8.8.8/").address == "8.8.8.8"
    assert policy.check("http://0x08080808/").address == "8.8.8.8"
    with pytest.raises(UnsafeUrlError):
        policy.check("http://0x7f.1/")
    with pytest.raises(UnsafeUrlError, match=r"0x0{40}7f\.1 is 127\.0\.0\.1, which is a loop"):
        policy.check(f"http://0x{'0' * 40}7f.1/")


@pytest.mark.parametrize("host", ["1" * 5000, "0x" + "f" * 13, "256.1.1.1.1", "1.2.3.4.5", "08.1"])
def test_numbers_beyond_an_ipv4_address_are_names(host: str) -> None:
    """As for `inet_aton`: the system resolver would look them up, and so does the check."""
    seen: list[str] = []

    def resolver(name: str, port: int) -> Sequence[str]:
        seen.append(name)
        return ["127.0.0.1"]

    with pytest.raises(UnsafeUrlError, match=r"resolves to 127\.0\.0\.1, which is a loopback"):
        AddressPolicy(resolver=resolver).check(f"http://{host}/")
    assert seen == [host]
