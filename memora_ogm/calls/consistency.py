"""What the graph-against-vector-store check finds, with no I/O. A point is compared by
its payload only, so any vector layout will do."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from memora_ogm.schema.models import Memory

#: Called with the number of graph memories compared so far.
Progress = Callable[[int], None]
Tenant = tuple[str, str]


@dataclass(frozen=True)
class FieldDifference:
    """A payload field that disagrees with the graph (as text; ``None``: absent)."""

    name: str
    graph: str
    store: str | None

    def __str__(self) -> str:
        return f"{self.name}: graph {self.graph!r}, store {self.store!r}"


@dataclass(frozen=True)
class MissingPoint:
    """A graph memory with no point (search cannot find it)."""

    memory: Memory

    def __str__(self) -> str:
        m = self.memory
        return f"missing point: memory {m.memory_id} of {m.org_id}/{m.user_id}"


@dataclass(frozen=True)
class OrphanPoint:
    """A point whose memory is gone (search returns it), of its payload's tenant."""

    memory_id: str
    org_id: str | None
    user_id: str | None

    def __str__(self) -> str:
        return f"orphan point: {self.memory_id} of {self.org_id}/{self.user_id}"


@dataclass(frozen=True)
class WrongPayload:
    """A point whose payload disagrees with its memory (search filters it wrongly)."""

    memory: Memory
    fields: tuple[FieldDifference, ...]

    def __str__(self) -> str:
        m = self.memory
        return f"wrong payload: memory {m.memory_id} of {m.org_id}/{m.user_id}: " + "; ".join(
            str(difference) for difference in self.fields
        )


@dataclass(frozen=True)
class ClashingMemoryId:
    """A memory id several tenants hold (one point cannot stand for all): for a person."""

    memory_id: str
    tenants: tuple[Tenant, ...]

    def __str__(self) -> str:
        owners = ", ".join(f"{org}/{user}" for org, user in self.tenants)
        return f"clashing memory id: {self.memory_id} held by {owners}"


Difference = MissingPoint | OrphanPoint | WrongPayload | ClashingMemoryId


@dataclass
class ConsistencyReport:
    """What a check found (and ``repair`` mended: all but the clashes), each list sorted."""

    org_id: str | None
    memories: int = 0
    points: int = 0
    missing: list[MissingPoint] = field(default_factory=list)
    orphans: list[OrphanPoint] = field(default_factory=list)
    wrong_payloads: list[WrongPayload] = field(default_factory=list)
    clashes: list[ClashingMemoryId] = field(default_factory=list)
    repaired: bool = False

    @property
    def agree(self) -> bool:
        return not self.differences()

    def differences(self) -> list[Difference]:
        return [*self.missing, *self.orphans, *self.wrong_payloads, *self.clashes]

    def sort(self) -> None:
        self.missing.sort(key=lambda d: _memory_order(d.memory))
        self.orphans.sort(key=lambda d: (d.org_id or "", d.user_id or "", d.memory_id))
        self.wrong_payloads.sort(key=lambda d: _memory_order(d.memory))
        self.clashes.sort(key=lambda d: d.memory_id)

    def summary(self) -> str:
        verb = "repaired" if self.repaired else "found"
        mended = " (clashes left for a person)" if self.repaired and self.clashes else ""
        return (
            f"{self.memories} memories, {self.points} points: {verb} {len(self.missing)} "
            f"missing, {len(self.orphans)} orphan, {len(self.wrong_payloads)} wrong "
            f"payload, {len(self.clashes)} clashing{mended}"
        )


def _memory_order(memory: Memory) -> tuple[str, str, str]:
    return memory.org_id, memory.user_id, memory.memory_id


def _instant(value: Any) -> datetime | None:
    """A payload timestamp as an aware datetime (naive is UTC, as the store writes it)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def payload_differences(memory: Memory, payload: Mapping[str, Any]) -> tuple[FieldDifference, ...]:
    """The fields of ``payload`` that disagree with ``memory`` (timestamps as instants)."""
    expected = {
        # The text is ``document`` in Memora's layout, ``memory`` in memora-ogm's.
        "text": (memory.memory, payload.get("document", payload.get("memory"))),
        "org_id": (memory.org_id, payload.get("org_id")),
        "user_id": (memory.user_id, payload.get("user_id")),
        "agent_id": (memory.agent_id, payload.get("agent_id")),
    }
    if "org_user_id" in payload:
        expected["org_user_id"] = (f"{memory.org_id}:{memory.user_id}", payload["org_user_id"])
    if "memory_id" in payload:
        expected["memory_id"] = (memory.memory_id, payload["memory_id"])
    found = [
        FieldDifference(name, graph, _text(stored))
        for name, (graph, stored) in expected.items()
        if graph != stored
    ]
    stored_at = payload.get("obtained_at")
    if _instant(stored_at) != memory.obtained_at:
        found.append(
            FieldDifference("obtained_at", memory.obtained_at.isoformat(), _text(stored_at))
        )
    return tuple(found)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def payload_tenant(payload: Mapping[str, Any]) -> tuple[str | None, str | None]:
    org, user = payload.get("org_id"), payload.get("user_id")
    return (org if isinstance(org, str) else None, user if isinstance(user, str) else None)


def settle(
    report: ConsistencyReport,
    ids: list[str],
    memories: list[Memory],
    payloads: Mapping[str, Mapping[str, Any]],
) -> None:
    """File ``ids`` in ``report`` from the graph's ``memories`` and the store's ``payloads``."""
    held: dict[str, list[Memory]] = {}
    for memory in memories:
        held.setdefault(memory.memory_id, []).append(memory)
    for memory_id in ids:
        owned, payload = held.get(memory_id, []), payloads.get(memory_id)
        if len(owned) > 1:
            owners = tuple(sorted((m.org_id, m.user_id) for m in owned))
            report.clashes.append(ClashingMemoryId(memory_id, owners))
        elif owned and payload is None:
            report.missing.append(MissingPoint(owned[0]))
        elif owned:
            differences = payload_differences(owned[0], payload or {})
            if differences:
                report.wrong_payloads.append(WrongPayload(owned[0], differences))
        elif payload is not None:
            report.orphans.append(OrphanPoint(memory_id, *payload_tenant(payload)))
