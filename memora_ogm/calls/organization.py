"""Organisations: the tenants everything else belongs to."""

from __future__ import annotations

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
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_name


def match_org(nodes: Nodes, work: UnitOfWork, org_id: str, lock: bool = False) -> Ref:
    """Declare the organisation ``OrganizationNotFound`` requires."""
    return work.match(nodes.Org, lambda: OrganizationNotFound(org_id), lock=lock, org_id=org_id)


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
ORGANIZATION = Prepared(
    lambda nodes, work, org_id: work.output("org", match_org(nodes, work, org_id))
)
ORGANIZATIONS = Prepared(lambda nodes, work: work.output("orgs", work.nodes(nodes.Org)))


def create_organization(nodes: Nodes, org_name: str) -> Call[models.Organization]:
    check_name("org_name", org_name, error=TypeError)
    work = UnitOfWork()
    _, props = work.create(nodes.Org, org_name=org_name)
    org_id = props["org_id"]
    return Call(
        work,
        lambda _: convert.organization(props, nodes.Org),
        write=True,
        landed=Landed(nodes.Org, {"org_id": org_id}),
        log=f"created organization {org_id}",
    )


def get_organization(nodes: Nodes, org_id: str) -> Call[models.Organization]:
    check_ids(TypeError, org_id=org_id)
    return Call(
        ORGANIZATION.bind(nodes, org_id=org_id),
        convert.output("org", nodes.Org, models.Organization),
    )


def get_all_organizations(nodes: Nodes) -> Call[list[models.Organization]]:
    return Call(ORGANIZATIONS.bind(nodes), convert.outputs("orgs", nodes.Org, models.Organization))


def update_organization(nodes: Nodes, org_id: str, new_org_name: str) -> Call[models.Organization]:
    check_ids(org_id=org_id)
    check_name("new_org_name", new_org_name)
    work = UnitOfWork()
    return changed(
        work, match_org(nodes, work, org_id), "org", models.Organization, org_name=new_org_name
    )


def delete_organization(nodes: Nodes, erasure: Erasure, org_id: str) -> Batches:
    """Delete the organisation and everything under it in batches; the last one purges its
    vectors.

    Each batch locks the organisation (as user and agent creation do), its users'
    collections (saves and updates link to them) and the interactions it takes (updates
    lock them), so writes under way finish first. Users go once emptied, the organisation
    last.
    """
    check_ids(TypeError, org_id=org_id)
    size = erasure.size
    work = UnitOfWork(batched=True)
    org = match_org(nodes, work, org_id, lock=True)
    users = work.nodes(nodes.User, per_batch(size, 4), org_id=org_id)
    collections = [
        work.reachable(users, rel) for rel in (nodes.User.interactions_in, nodes.User.has_memories)
    ]
    for ref in collections:
        work.lock(ref)
    interactions = work.nodes(nodes.Interaction, per_batch(size, INTERACTIONS), org_id=org_id)
    work.lock(interactions)
    memories = work.nodes(nodes.Memory, per_batch(size), org_id=org_id)
    agents = work.nodes(nodes.Agent, per_batch(size), org_id=org_id)
    groups = erase(nodes, work, size, erasure.vectors, memories, interactions)
    emptied = room(work, [*groups, (interactions, per_batch(size, INTERACTIONS))], "emptied")
    days = work.nodes(nodes.Date, per_batch(size), org_id=org_id)
    for ref in (*collections, users, agents, days):
        delete_when(work, ref, emptied)
    finished = room(
        work,
        [(users, per_batch(size, 4)), (agents, per_batch(size)), (days, per_batch(size))],
        FINISHED,
        emptied,
    )
    delete_when(work, org, finished)

    return batches(
        nodes,
        work,
        lambda changes: changes.purge_organization(org_id),
        Landed(nodes.Org, {"org_id": org_id}, present=False),
        f"deleted organization {org_id}",
    )
