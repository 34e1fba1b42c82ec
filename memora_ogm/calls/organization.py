"""Organisations: the tenants everything else belongs to."""

from __future__ import annotations

from memora_ogm._async.nodes import Agent, Date, Interaction, Memory, Org, User
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
from memora_ogm.engine.unit_of_work import Prepared, Ref, UnitOfWork
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_name


def match_org(work: UnitOfWork, org_id: str, lock: bool = False) -> Ref:
    """Declare the organisation ``OrganizationNotFound`` requires."""
    return work.match(Org, lambda: OrganizationNotFound(org_id), lock=lock, org_id=org_id)


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
ORGANIZATION = Prepared(lambda work, org_id: work.output("org", match_org(work, org_id)))
ORGANIZATIONS = Prepared(lambda work: work.output("orgs", work.nodes(Org)))
_organization = convert.output("org", Org, models.Organization)
_organizations = convert.outputs("orgs", Org, models.Organization)


def create_organization(org_name: str) -> Call[models.Organization]:
    check_name("org_name", org_name, error=TypeError)
    work = UnitOfWork()
    _, props = work.create(Org, org_name=org_name)
    org_id = props["org_id"]
    return Call(
        work,
        lambda _: convert.organization(props, Org),
        write=True,
        landed=Landed(Org, {"org_id": org_id}),
        log=f"created organization {org_id}",
    )


def get_organization(org_id: str) -> Call[models.Organization]:
    check_ids(TypeError, org_id=org_id)
    return Call(ORGANIZATION.bind(org_id=org_id), _organization)


def get_all_organizations() -> Call[list[models.Organization]]:
    return Call(ORGANIZATIONS.bind(), _organizations)


def update_organization(org_id: str, new_org_name: str) -> Call[models.Organization]:
    check_ids(org_id=org_id)
    check_name("new_org_name", new_org_name)
    work = UnitOfWork()
    return changed(work, match_org(work, org_id), "org", models.Organization, org_name=new_org_name)


def delete_organization(erasure: Erasure, org_id: str) -> Batches:
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
    org = match_org(work, org_id, lock=True)
    users = work.nodes(User, per_batch(size, 4), org_id=org_id)
    collections = [work.reachable(users, rel) for rel in (User.interactions_in, User.has_memories)]
    for ref in collections:
        work.lock(ref)
    interactions = work.nodes(Interaction, per_batch(size, INTERACTIONS), org_id=org_id)
    work.lock(interactions)
    memories = work.nodes(Memory, per_batch(size), org_id=org_id)
    agents = work.nodes(Agent, per_batch(size), org_id=org_id)
    groups = erase(work, size, erasure.vectors, memories, interactions)
    emptied = room(work, [*groups, (interactions, per_batch(size, INTERACTIONS))], "emptied")
    days = work.nodes(Date, per_batch(size), org_id=org_id)
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
        work,
        lambda changes: changes.purge_organization(org_id),
        Landed(Org, {"org_id": org_id}, present=False),
        f"deleted organization {org_id}",
    )
