"""Tenant exports page by key (issue 22): one statement a page, and the same records
whatever the page size.

Each test runs against the async facade and the generated sync twin, each with a real
qdrant-client store associated (the ``stores`` fixture).
"""

from __future__ import annotations

import pytest
from test_vector_consistency import Stores, stores
from transfer_helpers import build_organisation, records_of

from memora_ogm._async import paging as async_paging
from memora_ogm._async import transfer as async_transfer
from memora_ogm._sync import paging as sync_paging
from memora_ogm._sync import transfer as sync_transfer

__all__ = ["stores"]  # the fixture, imported so pytest finds it here


def small_pages(monkeypatch: pytest.MonkeyPatch, held_updates: int) -> None:
    """Pages of one node each, and at most ``held_updates`` contrary updates held back
    for the end of a user's memories (the rest read again after them)."""
    for pages in (async_paging, sync_paging):
        monkeypatch.setattr(pages, "FIRST_PAGE", 1)
        monkeypatch.setattr(pages, "PAGE_NODES", 1)
    for module in (async_transfer, sync_transfer):
        monkeypatch.setattr(module, "EXPORT_HELD_UPDATES", held_updates)


async def test_export_is_one_statement_a_page(stores: Stores) -> None:
    """Two users of an organisation, each page within the first page's size: the tenant
    check, the users, the agents, the users again, then each user's interactions and
    memories (their contrary updates come along)."""
    memora = stores.graph
    org = await build_organisation(memora)
    before = stores.connection.statements
    records = await records_of(memora.export_organization(org.org_id))
    assert stores.connection.statements - before == 1 + 1 + 1 + 1 + 2 * 2
    assert records[-1]["counts"]["contrary_update"] == 2

    before = stores.connection.statements
    await records_of(memora.export_user(org.org_id, org.ann))
    assert stores.connection.statements - before == 1 + 1 + 1 + 1 + 2


@pytest.mark.parametrize("held_updates", [0, 1, 10])
async def test_export_in_pages_of_one_gives_the_same_records(
    stores: Stores, monkeypatch: pytest.MonkeyPatch, held_updates: int
) -> None:
    """Across page boundaries (a page per node, contrary updates held back or read again
    after the memories), an export gives the records of a one-page export, in order."""
    memora = stores.graph
    org = await build_organisation(memora)
    await build_organisation(memora, "Other")
    whole = await records_of(memora.export_organization(org.org_id))
    ann = await records_of(memora.export_user(org.org_id, org.ann))
    before = stores.connection.statements

    small_pages(monkeypatch, held_updates)
    paged = await records_of(memora.export_organization(org.org_id))
    paged_ann = await records_of(memora.export_user(org.org_id, org.ann))

    assert paged[1:] == whole[1:]
    assert paged_ann[1:] == ann[1:]
    # A page per node, and one more that finds none after the last.
    content = len(whole) - 3  # less the header, organisation and end
    assert stores.connection.statements - before > content
