# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Users of an organisation, each with an interaction and a memory collection."""

from __future__ import annotations

from typing import Any

from memora_ogm import convert
from memora_ogm._sync.component import GraphComponent
from memora_ogm._sync.graph import Landed, VectorChanges, nothing
from memora_ogm._sync.memory import removed_memories
from memora_ogm._sync.nodes import (
    Date,
    Interaction,
    InteractionCollection,
    Memory,
    MemoryCollection,
    MessageBlock,
    Org,
    User,
)
from memora_ogm._sync.organization import match_org
from memora_ogm.errors import UserNotFound
from memora_ogm.schema import models
from memora_ogm.unit_of_work import Prepared, Ref, UnitOfWork
from memora_ogm.validation import check_ids, check_name


def match_user(work: UnitOfWork, org_id: str, user_id: str) -> Ref:
    """Declare the user ``UserNotFound`` requires."""
    return work.match(User, lambda: UserNotFound(org_id, user_id), org_id=org_id, user_id=user_id)


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
USER = Prepared(lambda work, **ids: work.output("user", match_user(work, **ids)))
ORG_USERS = Prepared(
    lambda work, org_id: work.output("users", work.reachable(match_org(work, org_id), Org.users))
)


class Neo4jUser(GraphComponent):
    def create_user(self, org_id: str, user_name: str) -> models.User:
        """One statement; it locks the organisation, which its deletion locks last."""
        check_ids(org_id=org_id)
        check_name("user_name", user_name)
        work = UnitOfWork()
        org = match_org(work, org_id, lock=True)
        user, props = work.create(User, org_id=org_id, user_name=user_name)
        owned = {"org_id": org_id, "user_id": props["user_id"]}
        work.link(User.belongs_to, user, org)
        work.link(User.interactions_in, user, work.create(InteractionCollection, **owned)[0])
        work.link(User.has_memories, user, work.create(MemoryCollection, **owned)[0])

        self.graph.write_unit(work, nothing, landed=Landed(User, owned))
        self.logger.info("created user %s", props["user_id"])
        return convert.user(props)

    def get_user(self, org_id: str, user_id: str) -> models.User:
        check_ids(org_id=org_id, user_id=user_id)
        work = USER.bind(org_id=org_id, user_id=user_id)
        return self.graph.read_unit(work, lambda row: convert.user(row["user"]))

    def get_all_org_users(self, org_id: str) -> list[models.User]:
        check_ids(org_id=org_id)
        work = ORG_USERS.bind(org_id=org_id)
        return self.graph.read_unit(work, lambda row: [convert.user(user) for user in row["users"]])

    def update_user(self, org_id: str, user_id: str, new_user_name: str) -> models.User:
        check_ids(org_id=org_id, user_id=user_id)
        check_name("new_user_name", new_user_name)
        work = UnitOfWork()
        user = match_user(work, org_id, user_id)
        work.set(user, user_name=new_user_name)
        work.output("user", user)

        return self.graph.write_unit(work, lambda row: convert.user(row["user"]))

    def delete_user(self, org_id: str, user_id: str) -> None:
        """Delete the user with its collections, interactions, messages, memories and dates.

        User-specific agents stay with the organisation; the user's memories leave
        the vector store in the same unit of work. The first statement locks the user's
        interactions, the user and its collections, which every write of the user locks
        or links to: writes under way finish before the second statement reads what to
        delete, and later ones find no user.
        """
        check_ids(org_id=org_id, user_id=user_id)
        lock = UnitOfWork()
        user = match_user(lock, org_id, user_id)
        collections = [
            lock.match_related(user, rel) for rel in (User.interactions_in, User.has_memories)
        ]
        # In the order every writer locks: interactions, then the user and its collections.
        lock.lock(lock.nodes(Interaction, org_id=org_id, user_id=user_id))
        for ref in (user, *collections):
            lock.lock(ref)

        work = UnitOfWork()
        owned: dict[str, Any] = {"org_id": org_id, "user_id": user_id}
        user = match_user(work, org_id, user_id)
        interactions = work.nodes(Interaction, **owned)
        memories = work.nodes(Memory, **owned)
        work.output("memories", memories)
        for ref in (
            memories,
            user,
            interactions,
            work.reachable(interactions, Interaction.first_message, MessageBlock.is_next),
            *(work.nodes(cls, **owned) for cls in (InteractionCollection, MemoryCollection, Date)),
        ):
            work.delete(ref)

        def delete(changes: VectorChanges) -> None:
            self.graph.run(lock)
            changes.remove(removed_memories(self.graph.run(work)))
            changes.purge_user(org_id, user_id)

        self.graph.write(delete, Landed(User, owned, present=False))
