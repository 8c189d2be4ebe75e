"""kb.pages.tags: which articles a page lists under 相关文章."""

from __future__ import annotations

from types import SimpleNamespace

from kb.pages.tags import related_all


def env_of(pages: dict[str, dict], order: list[str]):
    domain = SimpleNamespace(data={"documents": {"pages": pages}, "site": {"reading_order": order}})
    return SimpleNamespace(get_domain=lambda name: domain)


def test_most_shared_tags_first_then_same_guide():
    pages = {
        "a/one": {"guide": "a", "tags": ["x", "y"]},
        "a/two": {"guide": "a", "tags": ["z"]},
        "b/three": {"guide": "b", "tags": ["x", "y"]},
        "b/four": {"guide": "b", "tags": ["x"]},
        "a/five": {"guide": "a", "tags": ["x"]},
    }
    related = related_all(env_of(pages, list(pages)))
    # two shared tags, then one (same guide before other guide), then none
    assert related["a/one"] == ["b/three", "a/five", "b/four"]
    assert related["a/two"] == ["a/one", "a/five"]


def test_ties_go_to_the_nearest_articles_in_reading_order():
    """Not always the guide's first three: each page lists its neighbours, so
    one article's title shows on a few pages, not on every page of its guide."""
    order = [f"g/p{i}" for i in range(1, 9)]
    pages = {doc: {"guide": "g", "tags": ["t"]} for doc in order}
    related = related_all(env_of(pages, order))
    assert related["g/p6"] == ["g/p5", "g/p7", "g/p4"]  # equally near: the earlier first
    assert related["g/p1"] == ["g/p2", "g/p3", "g/p4"]
    assert related["g/p8"] == ["g/p7", "g/p6", "g/p5"]
    shows_p1 = [doc for doc, rows in related.items() if "g/p1" in rows]
    assert shows_p1 == ["g/p2", "g/p3"]


def test_the_lists_are_ranked_again_when_tags_guides_or_the_order_change():
    """related_all keeps its lists in the environment with what they were
    ranked from; a change to any of that ranks them again (a title does not
    count: the lists name pages, and the pages show their current titles)."""
    order = ["g/a", "g/b", "g/c", "h/d"]
    pages = {doc: {"guide": doc[0], "tags": ["t"]} for doc in order}
    env = env_of(pages, order)
    assert related_all(env)["g/a"] == ["g/b", "g/c", "h/d"]
    pages["h/d"] = {"guide": "h", "tags": ["t", "u"]}
    pages["g/a"] = {"guide": "g", "tags": ["t", "u"]}  # as a page read again is stored
    assert related_all(env)["g/a"] == ["h/d", "g/b", "g/c"]
    pages["h/d"]["tags"].remove("u")  # changed in place
    assert related_all(env)["g/a"] == ["g/b", "g/c", "h/d"]
    order[1], order[2] = order[2], order[1]  # the reading order, changed in place
    assert related_all(env)["g/a"] == ["g/c", "g/b", "h/d"]
    pages["g/c"] = {"guide": "h", "tags": ["t"]}
    assert related_all(env)["g/a"] == ["g/b", "g/c", "h/d"]
