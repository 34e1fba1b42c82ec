"""An export's records and reads, with no I/O: the tenant first, then each kind's pages
in key order (the twins' ``Neo4jTransfer`` runs them)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memora_ogm._version import __version__
from memora_ogm.calls.organization import match_org
from memora_ogm.calls.user import match_user
from memora_ogm.engine.call import Call
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.pages import Part, Related
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.transfer.format import (
    CONTENT_TYPES,
    END,
    FORMAT_NAME,
    FORMAT_VERSION,
    HEADER,
    INTERACTION,
    MEMORY,
    Record,
    dump_datetime,
)
from memora_ogm.transfer.validation import shapes


def header(scope: str, org_id: str, user_id: str | None, database: str | None) -> Record:
    return {
        "type": HEADER,
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": dump_datetime(datetime.now().astimezone()),
        "source": {"software": f"memora-ogm {__version__}", "database": database},
        "scope": {"kind": scope, "org_id": org_id, "user_id": user_id},
    }


def record(nodes: Nodes, kind: str, values: Mapping[str, Any], **extras: Any) -> Record:
    """A ``kind`` record: its properties from the node's inflated ``values``, then ``extras``."""
    made: Record = {"type": kind}
    for name in shapes(nodes)[kind].properties:
        value = values[name]
        made[name] = dump_datetime(value) if isinstance(value, datetime) else value
    made.update(extras)
    return made


def interaction(nodes: Nodes, node: Mapping[str, Any], row: Mapping[str, Any]) -> Record:
    return record(
        nodes,
        INTERACTION,
        node,
        dates=sorted(day.iso_format() for day in row["dates"]),
        messages=[{"role": role, "content": content} for role, content in row["messages"]],
    )


def memory(nodes: Nodes, node: Mapping[str, Any], row: Mapping[str, Any]) -> Record:
    return record(
        nodes,
        MEMORY,
        node,
        date_obtained=row["days"][0].iso_format() if row["days"] else None,
        source_positions=sorted(row["sources"]),
    )


def end(counts: Mapping[str, int]) -> Record:
    return {"type": END, "counts": {kind: counts.get(kind, 0) for kind in CONTENT_TYPES}}


def tenant(nodes: Nodes, org_id: str, user_id: str | None) -> Call[dict[str, Any]]:
    """An export's first read: the organisation's values (its user must exist too)."""
    work = UnitOfWork()
    found = match_org(nodes, work, org_id)
    if user_id is not None:
        match_user(nodes, work, org_id, user_id)
    work.output("org", found)
    return Call(work, lambda row: projection(reading(nodes.Org)).values(row["org"]))


@dataclass(frozen=True)
class ExportPages:
    """What an export pages through, with what each row brings along."""

    users: Part
    agents: Part
    interactions: Part
    memories: Part


@functools.cache
def export_pages(nodes: Nodes) -> ExportPages:
    messages = Related(
        (nodes.Interaction.first_message, nodes.MessageBlock.is_next),
        ("role", "content"),
        "msg_position",
    )
    occurred = Related((nodes.Interaction.has_occurrence_on,), ("date",))
    sources = Related((nodes.Memory.message_source,), ("msg_position",))
    obtained = Related((nodes.Memory.date_obtained,), ("date",))
    newer = Related(
        (nodes.Memory.contrary_update,), ("memory_id",), "memory_id", ("org_id", "user_id")
    )
    return ExportPages(
        Part(nodes.User, "user_id"),
        Part(nodes.Agent, "agent_id"),
        Part(nodes.Interaction, "interaction_id", (("messages", messages), ("dates", occurred))),
        Part(
            nodes.Memory, "memory_id", (("sources", sources), ("days", obtained), ("newer", newer))
        ),
    )
