"""The admin's memory pages in headless Chromium, as an operator uses them: log in, open
a user of 10,000 memories, go to page 3, open a memory's history, export the user, erase
the user. A screenshot of each page goes to ``$ADMIN_SCREENSHOTS``. It runs without a vector store
(an embedded one takes minutes to embed 10,000 memories); ``admin_tests.py`` erases from
both stores.

Run by ``tests/test_contrib_django_admin.py`` in a pytest of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect, sync_playwright

from memora_ogm import sync
from memora_ogm.errors import UserNotFound

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from admin_data import a_user_with  # noqa: E402 (a test helper, found above)

MEMORIES, INTERACTIONS = 10_000, 1_000


def chromium() -> str:
    found = next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    assert found is not None, "no Chromium: scripts/test.sh installs Debian's chromium"
    return found


@pytest.mark.django_db(transaction=True)
def test_an_operator_browses_exports_and_erases_a_large_user(
    live_server: Any, memora_graph: sync.Neo4jGraphInterface, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("ADMIN_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    made = a_user_with(memora_graph, INTERACTIONS, MEMORIES)
    get_user_model().objects.create_superuser("operator", password="a long secret")

    def shot(page: Page, name: str) -> None:
        page.screenshot(path=str(shots / f"{name}.png"), full_page=False)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium())
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.goto(f"{live_server.url}/admin/")
        page.fill("#id_username", "operator")
        page.fill("#id_password", "a long secret")
        page.click("input[type=submit]")
        expect(page.locator("#content")).to_contain_text("memory graph", ignore_case=True)
        shot(page, "1-index")

        page.click("text=Memory graph")
        expect(page.locator("#result_list")).to_contain_text("Acme")
        shot(page, "2-organisations")
        page.click("#result_list >> text=Acme")
        expect(page.locator("#result_list")).to_contain_text("Ann")
        shot(page, "3-organisation")
        page.click("#result_list >> text=Ann")
        expect(page.locator("#content")).to_contain_text(f"{MEMORIES} memories")

        page.click(".paginator >> text=3")
        expect(page.locator(".paginator .this-page").first).to_have_text("3")
        rows = page.locator("#result_list tbody tr")
        expect(rows).to_have_count(50)
        # newest first: page 3 starts 100 memories below the newest
        expect(rows.first).to_contain_text(f"fact {MEMORIES - 101}")
        shot(page, "4-user-page-3")

        # fact 9899 superseded fact 9898 (tests/admin_data.py: every tenth supersedes)
        page.click(f"#result_list >> text=Ann remembers fact {MEMORIES - 101}")
        expect(page.locator("#history_list")).to_contain_text(f"fact {MEMORIES - 102}")
        expect(page.locator("#source_list")).to_contain_text("Message")
        shot(page, "5-memory-history")
        page.go_back()

        with page.expect_download() as exported:
            page.click("#export")
        saved = tmp_path / "export.jsonl"
        exported.value.save_as(saved)
        lines = [json.loads(line) for line in saved.read_text().splitlines()]
        assert lines[-1]["counts"]["memory"] == MEMORIES
        assert lines[-1]["counts"]["interaction"] == INTERACTIONS

        page.click("#erase")
        expect(page.locator("#going")).to_contain_text(f"{MEMORIES} memories")
        shot(page, "6-erase-confirmation")
        page.click("#confirm")
        expect(page.locator(".messagelist")).to_contain_text("Erased user Ann")
        shot(page, "7-erased")
        browser.close()

    assert memora_graph.get_organization(made.org_id).org_name == "Acme"
    assert memora_graph.get_all_org_users(made.org_id) == []
    with pytest.raises(UserNotFound):
        memora_graph.get_all_user_memories(made.org_id, made.user_id, limit=1)
    entry = LogEntry.objects.get()
    assert entry.object_id == f"{made.org_id}/{made.user_id}"
