"""Users of an organisation, each with an interaction and a memory collection."""

from __future__ import annotations

from memora_ogm.calls.organization import match_org
from memora_ogm.engine import convert
from memora_ogm.engine.call import Batches, Call, Landed, changed
from memora_ogm.engine.erasure import (
    FINISHED,
    INTERACTIONS,
    Erasure,
    batches,
    delete_when,
    erase,
    per_batch,
    room,
)
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.unit_of_work import Prepared, Ref, UnitOfWork
from memora_ogm.errors import UserNotFound
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_name


def match_user(nodes: Nodes, work: UnitOfWork, org_id: str, user_id: str) -> Ref:
    """The user, else ``UserNotFound``."""
    return work.match(
        nodes.User, lambda: UserNotFound(org_id, user_id), org_id=org_id, user_id=user_id
    )


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
USER = Prepared(lambda nodes, work, **ids: work.output("user", match_user(nodes, work, **ids)))
ORG_USERS = Prepared(
    lambda nodes, work, org_id: work.output(
        "users", work.reachable(match_org(nodes, work, org_id), nodes.Org.users)
    )
)


def create_user(nodes: Nodes, org_id: str, user_name: str) -> Call[models.User]:
    """One statement; it locks the organisation, which its deletion locks last."""
    check_ids(org_id=org_id)
    check_name("user_name", user_name)
    work = UnitOfWork()
    org = match_org(nodes, work, org_id, lock=True)
    user, props = work.create(nodes.User, org_id=org_id, user_name=user_name)
    owned = {"org_id": org_id, "user_id": props["user_id"]}
    work.link(nodes.User.belongs_to, user, org)
    work.link(
        nodes.User.interactions_in, user, work.create(nodes.InteractionCollection, **owned)[0]
    )
    work.link(nodes.User.has_memories, user, work.create(nodes.MemoryCollection, **owned)[0])
    return Call(
        work,
        lambda _: convert.read(nodes.User, models.User, props),
        write=True,
        landed=Landed(nodes.User, owned),
        log=f"created user {props['user_id']}",
    )


def get_user(nodes: Nodes, org_id: str, user_id: str) -> Call[models.User]:
    check_ids(org_id=org_id, user_id=user_id)
    return Call(
        USER.bind(nodes, org_id=org_id, user_id=user_id),
        convert.output("user", nodes.User, models.User),
    )


def get_all_org_users(nodes: Nodes, org_id: str) -> Call[list[models.User]]:
    check_ids(org_id=org_id)
    return Call(
        ORG_USERS.bind(nodes, org_id=org_id), convert.outputs("users", nodes.User, models.User)
    )


def update_user(nodes: Nodes, org_id: str, user_id: str, new_user_name: str) -> Call[models.User]:
    check_ids(org_id=org_id, user_id=user_id)
    check_name("new_user_name", new_user_name)
    work = UnitOfWork()
    user = match_user(nodes, work, org_id, user_id)
    return changed(work, user, "user", models.User, user_name=new_user_name)


def delete_user(nodes: Nodes, erasure: Erasure, org_id: str, user_id: str) -> Batches:
    """Delete the user and all under it in batches (agents stay); the last purges its vectors.

    Each batch first locks the user and its collections, which every write of the user links
    to, so writes under way finish first. The user goes last, with the last of its nodes.
    """
    check_ids(org_id=org_id, user_id=user_id)
    size = erasure.size
    work = UnitOfWork(batched=True)
    user = match_user(nodes, work, org_id, user_id)
    collections = [
        work.match_related(user, rel)
        for rel in (nodes.User.interactions_in, nodes.User.has_memories)
    ]
    for ref in (user, *collections):
        work.lock(ref)
    owned = {"org_id": org_id, "user_id": user_id}
    interactions = work.nodes(nodes.Interaction, per_batch(size, INTERACTIONS), **owned)
    work.lock(interactions)
    memories = work.nodes(nodes.Memory, per_batch(size), **owned)
    groups = erase(nodes, work, size, erasure.vectors, memories, interactions)
    emptied = room(work, [*groups, (interactions, per_batch(size, INTERACTIONS))], "emptied")
    days = work.nodes(nodes.Date, per_batch(size), **owned)
    delete_when(work, days, emptied)
    finished = room(work, [(days, per_batch(size))], FINISHED, emptied)
    for ref in (user, *collections):
        delete_when(work, ref, finished)

    return batches(
        nodes,
        work,
        lambda changes: changes.purge_user(org_id, user_id),
        Landed(nodes.User, owned, present=False),
        f"deleted user {user_id}",
    )


def tenant_exists(nodes: Nodes, org_id: str, user_id: str | None = None) -> Call[bool]:
    """Whether the graph holds the organisation (or its user): a pending purge of its
    points is settled by it."""
    work = UnitOfWork()
    if user_id is None:
        work.output("found", work.nodes(nodes.Org, 1, org_id=org_id))
    else:
        work.output("found", work.nodes(nodes.User, 1, org_id=org_id, user_id=user_id))
    return Call(work, lambda row: bool(row["found"]))
