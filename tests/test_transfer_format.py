"""Export format v1, byte for byte: a fixed world exported equals its committed files.

``tests/golden/transfer/organization.jsonl`` is an export of an organisation with every
feature (users with and without content, org-wide and user-specific agents, chains cut by
updates, memories with and without sources, a contrary update chain, days across
midnight in three offsets, an interaction without messages, an empty message, text
beyond ASCII); ``user.jsonl`` the export of one of its users. The test imports the
organisation beside another one, exports it through the facade (both twins) and the
CLI, and compares every byte but the header's moment, software version and database.
``MEMORA_OGM_UPDATE_GOLDEN=1`` builds the world through the public API and rewrites
the files: a change of the format shows as their diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import World, chat, conversation, save
from transfer_helpers import build_organisation, records_of

from memora_ogm.cli import main
from memora_ogm.server import Neo4jConnection
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer.format import JsonLinesFile

GOLDEN = Path(__file__).parent / "golden" / "transfer"
ORGANIZATION = GOLDEN / "organization.jsonl"
USER = GOLDEN / "user.jsonl"
UPDATE = os.environ.get("MEMORA_OGM_UPDATE_GOLDEN") == "1"
#: The SHA-256 of the committed organisation file: regenerating it must be deliberate.
ORGANIZATION_SHA256 = "eab2f377738618f513b872218953c708c64c785c7278f571d52abbe9f097c8d6"

#: The header's values that differ between two exports of the same content.
_VARYING = re.compile(r'"(exported_at|software|database)":("[^"]*"|null)')


def _fixed(text: str) -> str:
    """``text`` with the varying header values replaced by their names."""
    head, rest = text.split("\n", 1)
    return _VARYING.sub(lambda match: f'"{match[1]}":"<{match[1]}>"', head) + "\n" + rest


def _text(records: list[dict[str, Any]]) -> str:
    return _fixed("".join(transfer.dumps(record) + "\n" for record in records))


async def _build_world(memora: Any) -> tuple[str, str]:
    """The organisation of the golden files, through the public API; its and a user's id."""
    org = await build_organisation(memora, "Zürich 東京 ✓")
    await memora.create_user(org.org_id, "Quiet user")
    await save(
        memora,
        World(org.org_id, org.bob, org.bot),
        conversation(
            [*chat("", "Ça va? 😀"), {"role": "system", "content": 'line\nbreak "quoted"'}],
            when=datetime(2023, 12, 31, 23, 59, 59, tzinfo=timezone.utc),
            memories=[(f"user_{org.bob} écrit « bonjour »", [1, 2])],
        ),
    )
    return org.org_id, org.bob


async def test_export_format_v1_is_unchanged(
    memora: Any,
    neo4j_connection: Neo4jConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await build_organisation(memora, "Other")
    if UPDATE:
        org_id, user_id = await _build_world(memora)
        GOLDEN.mkdir(exist_ok=True)
        ORGANIZATION.write_text(
            _text(await records_of(memora.export_organization(org_id))), encoding="utf-8"
        )
        USER.write_text(
            _text(await records_of(memora.export_user(org_id, user_id))), encoding="utf-8"
        )
    golden = ORGANIZATION.read_text(encoding="utf-8")
    scope = json.loads(USER.read_text(encoding="utf-8").split("\n", 1)[0])["scope"]
    org_id, user_id = scope["org_id"], scope["user_id"]
    if not UPDATE:
        await memora.import_records(JsonLinesFile(ORGANIZATION))

    assert _text(await records_of(memora.export_organization(org_id))) == golden
    assert _text(await records_of(memora.export_user(org_id, user_id))) == USER.read_text(
        encoding="utf-8"
    )
    for name, value in neo4j_connection.env().items():
        monkeypatch.setenv(name, value)
    exported = tmp_path / "exported.jsonl"
    assert main(["export", "--org", org_id, "-o", str(exported)]) == 0
    assert _fixed(exported.read_text(encoding="utf-8")) == golden
    assert hashlib.sha256(golden.encode()).hexdigest() == ORGANIZATION_SHA256
