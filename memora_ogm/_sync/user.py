# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Users of an organisation, each with an interaction and a memory collection."""

from __future__ import annotations

from memora_ogm import convert
from memora_ogm._sync.component import GraphComponent, get_org, get_user, locked_org, locked_user
from memora_ogm._sync.graph import VectorChanges
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
from memora_ogm._sync.ogm import connect_many, delete_nodes, reachable
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_name


class Neo4jUser(GraphComponent):
    def create_user(self, org_id: str, user_name: str) -> models.User:
        check_ids(org_id=org_id)
        check_name("user_name", user_name)

        def work(_: VectorChanges) -> models.User:
            org = locked_org(org_id)
            user = User(org_id=org_id, user_name=user_name).save()
            interactions = InteractionCollection(org_id=org_id, user_id=user.user_id).save()
            memories = MemoryCollection(org_id=org_id, user_id=user.user_id).save()
            connect_many(
                (User.belongs_to, [(user, org)]),
                (User.interactions_in, [(user, interactions)]),
                (User.has_memories, [(user, memories)]),
            )
            return convert.user(user)

        user = self.graph.write(work)
        self.logger.info("created user %s", user.user_id)
        return user

    def get_user(self, org_id: str, user_id: str) -> models.User:
        check_ids(org_id=org_id, user_id=user_id)

        def work() -> models.User:
            return convert.user(get_user(org_id, user_id))

        return self.graph.read(work)

    def get_all_org_users(self, org_id: str) -> list[models.User]:
        check_ids(org_id=org_id)

        def work() -> list[models.User]:
            users = reachable([get_org(org_id)], Org.users)
            return [convert.user(node) for _, node in users]

        return self.graph.read(work)

    def update_user(self, org_id: str, user_id: str, new_user_name: str) -> models.User:
        check_ids(org_id=org_id, user_id=user_id)
        check_name("new_user_name", new_user_name)

        def work(_: VectorChanges) -> models.User:
            user = get_user(org_id, user_id)
            user.user_name = new_user_name
            return convert.user(user.save())

        return self.graph.write(work)

    def delete_user(self, org_id: str, user_id: str) -> None:
        """Delete the user with its collections, interactions, messages, memories and dates.

        User-specific agents stay with the organisation; the user's memories leave
        the vector store in the same unit of work.
        """
        check_ids(org_id=org_id, user_id=user_id)

        def work(changes: VectorChanges) -> None:
            # Locked first: writes of this user that are under way finish before the
            # reads below, and later ones find no user.
            user = locked_user(org_id, user_id)
            owned = {"org_id": org_id, "user_id": user_id}
            interactions = Interaction.nodes.filter(**owned).all()
            memories = Memory.nodes.filter(**owned).all()
            messages = reachable(interactions, Interaction.first_message, MessageBlock.is_next)
            changes.remove(convert.memory_for_vector(node) for node in memories)
            changes.purge_user(org_id, user_id)
            delete_nodes(
                [user, *interactions, *memories, *(message for _, message in messages)]
                + InteractionCollection.nodes.filter(**owned).all()
                + MemoryCollection.nodes.filter(**owned).all()
                + Date.nodes.filter(**owned).all()
            )

        self.graph.write(work)
