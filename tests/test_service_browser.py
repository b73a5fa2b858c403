"""The web page end to end in headless Chromium (Debian ``chromium``, driven by Playwright; never a downloaded
browser): streamed answers with cited knowledge and source kinds, the session list, Chinese and English.

Set ``RAGDIAL_SCREENSHOT=docs/screenshot.png`` to also write the screenshot the README shows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from service_server import ROOT, Server

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CONFIG = {
    "languages": ["zh", "en"],
    "knowledge": "service_doubles:knowledge",
    "retriever": "service_doubles:retriever",
    "generator": "service_doubles:generator",
    "top_k": 2,
}

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium; see scripts/system-deps.sh)")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def _ask(page, text: str):
    """Send ``text`` and wait until its answer has finished streaming."""
    before = page.locator(".msg.assistant").count()
    page.get_by_test_id("input").fill(text)
    page.get_by_test_id("input").press("Enter")
    answer = page.locator(".msg.assistant").nth(before)
    page.locator(".msg.assistant[data-done='true']").nth(before).wait_for(timeout=60_000)
    return answer


@pytest.mark.slow
def test_chat_page_streams_cited_answers_in_both_languages(tmp_path, browser):
    server = Server(tmp_path, CONFIG).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 680}, locale="zh-CN")
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(server.url + "/")
        page.locator("#profile option[value='u2']").wait_for(state="attached")
        assert page.get_by_test_id("send").inner_text() == "发送"
        page.get_by_test_id("profile").select_option("u2")

        answer = _ask(page, "我的夜猫流量包余额还有多少")
        assert answer.locator(".bubble").inner_text().startswith("[我的夜猫流量包余额还有多少]")
        citations = answer.get_by_test_id("citation")
        assert citations.count() == 2
        kinds = {citations.nth(i).get_attribute("data-source") for i in range(2)}
        assert "user_profile" in kinds
        badges = answer.locator(".badge").all_inner_texts()
        assert "用户信息" in badges
        assert "u2:plan" in answer.get_by_test_id("citations").inner_text()

        answer = _ask(page, "怎么查询话费余额")
        assert answer.locator(".badge").first.inner_text() == "常见问题"
        sessions = page.get_by_test_id("sessions").locator("li")
        sessions.first.wait_for()
        assert sessions.count() == 1 and "我的夜猫流量包" in sessions.first.inner_text()

        page.click("#lang-en")
        page.wait_for_function("document.getElementById('send').textContent === 'Send'")
        assert page.get_by_test_id("new-chat").inner_text() == "New chat"
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        answer = _ask(page, "how do I check my balance")
        assert answer.locator(".badge").first.inner_text() == "FAQ"
        page.wait_for_function("document.querySelectorAll('#sessions li').length === 2")

        # reopen the first session from the list after a reload: history and citations come back
        page.reload()
        page.get_by_test_id("sessions").locator("li", has_text="我的夜猫流量包").click()
        page.wait_for_function("document.querySelectorAll('.msg.assistant').length === 2")
        assert page.get_by_test_id("send").inner_text() == "发送"  # the session's language
        restored = page.locator(".msg.assistant").first
        assert restored.get_by_test_id("citation").count() == 2
        answer = _ask(page, "畅游套餐多少钱")
        assert page.locator(".msg.assistant").count() == 3
        assert errors == []
    finally:
        server.stop()


DEMO = {"knowledge": "demo", "retriever": {"name": "bm25", "query": "last_user"}, "generator": "template"}
SOURCES = {"user_profile": ("用户信息", "user profile"), "product": ("产品", "product"), "faq": ("常见问题", "FAQ")}


@pytest.mark.slow
def test_demo_page_on_the_bundled_knowledge_base(tmp_path, browser):
    """The page over the real demo (BM25 + templates): every answer cites typed knowledge; the screenshot."""
    server = Server(tmp_path, DEMO).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 700}, locale="zh-CN")
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(server.url + "/")
        page.locator("#profile option[value='demo-u1']").wait_for(state="attached")
        page.get_by_test_id("profile").select_option("demo-u1")
        for question in ("我的账户余额还有多少", "国际漫游怎么开通", "我本月已用流量多少"):
            answer = _ask(page, question)
            assert answer.locator(".bubble").inner_text().strip()
            citations = answer.get_by_test_id("citation")
            assert citations.count() >= 1
            for i in range(citations.count()):
                kind = citations.nth(i).get_attribute("data-source")
                assert citations.nth(i).locator(".badge").inner_text() == SOURCES[kind][0]
        sources = [c.get_attribute("data-source") for c in page.get_by_test_id("citation").all()]
        assert "faq" in sources and "user_profile" in sources
        assert page.get_by_test_id("sessions").locator("li").count() == 1
        assert errors == []
        shot = tmp_path / "screenshot.png"
        page.screenshot(path=str(shot))
        assert 10_000 < shot.stat().st_size < 400_000
        target = os.environ.get("RAGDIAL_SCREENSHOT")
        if target:
            shutil.copy(shot, ROOT / Path(target))
    finally:
        server.stop()
