"""The API's tests, each on an empty graph: the ``memora_graph`` fixture (pytest style) and
``MemoraGraphMixin`` (Django's test case style), both on memora-ogm's test server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, SimpleTestCase

from memora_ogm import sync
from memora_ogm.contrib.django.testing import MemoraGraphMixin


def post(client: Client, url: str, body: dict[str, Any]) -> Any:
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def new_user(client: Client, user_name: str) -> tuple[str, str]:
    """An organisation with one user, made through the API: their ids."""
    org = post(client, "/orgs", {"org_name": "Acme"})
    user = post(client, f"/orgs/{org['org_id']}/users", {"user_name": user_name})
    return org["org_id"], user["user_id"]


@pytest.mark.parametrize("user_name", ["Ann", "Bob"])  # the second run finds no Ann
def test_a_user_made_through_the_api_is_the_only_one(
    client: Client, memora_graph: sync.Neo4jGraphInterface, user_name: str
) -> None:
    assert memora_graph.get_all_organizations() == []
    org_id, user_id = new_user(client, user_name)
    (user,) = memora_graph.get_all_org_users(org_id)
    assert (user.user_id, user.user_name) == (user_id, user_name)


class MemoriesTests(MemoraGraphMixin, SimpleTestCase):
    def remember(self, fact: str) -> tuple[str, str]:
        org_id, user_id = new_user(self.client, "Ann")
        agent = post(self.client, f"/orgs/{org_id}/agents", {"agent_label": "Helper"})
        post(
            self.client,
            f"/orgs/{org_id}/users/{user_id}/interactions",
            {
                "agent_id": agent["agent_id"],
                "interaction": [{"role": "user", "content": fact}],
                "memories": [{"memory": fact, "source_msg_block_pos": [0]}],
            },
        )
        return org_id, user_id

    def test_a_saved_memory_is_read_back(self) -> None:
        assert self.memora.get_all_organizations() == []
        org_id, user_id = self.remember("Ann likes green tea")
        read = self.client.get(f"/orgs/{org_id}/users/{user_id}/memories").json()
        assert [memory["memory"] for memory in read] == ["Ann likes green tea"]

    def test_the_graph_is_empty_again(self) -> None:
        assert self.memora.get_all_organizations() == []
        org_id, user_id = self.remember("Ann runs")
        assert [m.memory for m in self.memora.get_all_user_memories(org_id, user_id)] == [
            "Ann runs"
        ]
