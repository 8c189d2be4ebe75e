"""Links the link checker must not request from CI's machine (KB012): the host
as requests reads it (IDNA UTS #46), and any address that is not global."""

from __future__ import annotations

import pytest
from kb.guard.untrusted import private_host

REFUSED = [
    "http://127.0.0.1/",
    "http://127.1:8080/",
    "http://2130706433/",
    "http://localhost/",
    "http://a.localhost/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.100.100.200/latest/meta-data/",  # Alibaba Cloud's metadata service
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://198.18.0.1/",  # benchmarking range
    "http://10.0.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://224.0.0.1/",
    "http://127。0。0。1:8765/x",  # ideographic full stops
    "http://１２７.0.0.1/",  # full-width digits
    "http://ｌｏｃａｌｈｏｓｔ/",
    "http://LOCALHOST./",
    "http://printer.local/",
    # Sphinx's link checker sends a non-ASCII address through the IDNA 2003
    # codec, which deletes zero-width joiners and non-joiners
    "http://127.0.0.1\u200d:8765/rst",
    "http://169.254.169.254\u200d/latest/",
    "http://lo\u200ccalhost/",
    "http://metadata.google.internal\u200d/",
    # urllib3 (requests) decodes %XX in the host and ends it at a backslash
    "http://127%2e0.0.1:8765/p1",
    "http://%6c%6f%63%61%6c%68%6f%73%74/",
    "http://127.0.0.1:8765\\@example.com/p3",
    # a name of one label resolves only inside a network
    "http://metadata/computeMetadata/v1/",
    "http://ip6-localhost/",
]
ALLOWED = [
    "https://pytorch.org/docs/stable/data.html",
    "https://8.8.8.8/",
    "https://例子.中国/",
    "https://xn--fiqs8s.cn/",
    "https://docs.nvidia.com/",
    "https://[2001:4860:4860::8888]/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_link_inside_the_machine_or_its_network_is_refused(url):
    assert private_host(url)


@pytest.mark.parametrize("url", ALLOWED)
def test_a_public_link_is_allowed(url):
    assert private_host(url) is None
