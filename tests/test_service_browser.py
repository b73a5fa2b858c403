"""The web page end to end in headless Chromium (Debian ``chromium``, driven by Playwright; never a downloaded
browser): streamed answers with cited knowledge and source kinds, the session list, Chinese and English; a phone
layout, long tokens, the stop button, the client timeout, the keyboard, each profile's own sessions.

Set ``RAGDIAL_SCREENSHOT=docs/screenshot.png`` and ``RAGDIAL_SCREENSHOT_MOBILE=docs/screenshot-mobile.png`` to also
write the screenshots the docs show.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

from service_server import ROOT, Server

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
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
    "grounded": False,  # the page is tested on the echo double; the grounded path has its own tests
}

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = playwright_api.expect


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


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def _box(page, selector: str) -> dict:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not rendered"
    return box


def _no_horizontal_overflow(page) -> None:
    """Nothing sticks out to the right: the page and the message column scroll only vertically."""
    widths = page.evaluate(
        """() => ({page: document.documentElement.scrollWidth, view: window.innerWidth,
                   messages: document.getElementById('messages').scrollWidth,
                   column: document.getElementById('messages').clientWidth})"""
    )
    assert widths["page"] <= widths["view"], widths
    assert widths["messages"] <= widths["column"], widths


@pytest.mark.slow
def test_phone_layout_collapses_the_sessions_into_a_toggle(tmp_path, browser):
    """At 390x844 the sidebar is a panel behind the header's toggle and the text box is at least 300 px wide."""
    server = Server(tmp_path, DEMO).start()
    try:
        page = browser.new_page(locale="zh-CN", **PHONE)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(server.url + "/")
        page.locator("#profile option[value='demo-u1']").wait_for(state="attached")
        page.get_by_test_id("profile").select_option("demo-u1")

        assert not page.get_by_test_id("sidebar").is_visible()
        menu = page.get_by_test_id("menu")
        assert menu.is_visible() and menu.get_attribute("aria-expanded") == "false"
        for question in ("国际漫游怎么开通", "我本月已用流量多少"):
            answer = _ask(page, question)
            assert answer.get_by_test_id("citation").count() >= 1
        box = _box(page, "#input")
        assert box["width"] >= 300, box
        send = _box(page, "#send")
        assert send["x"] >= box["x"] + box["width"] and send["x"] + send["width"] <= 390, (box, send)
        _no_horizontal_overflow(page)
        assert errors == []

        shot = tmp_path / "screenshot-mobile.png"
        page.screenshot(path=str(shot))
        assert 10_000 < shot.stat().st_size < 600_000
        target = os.environ.get("RAGDIAL_SCREENSHOT_MOBILE")
        if target:
            shutil.copy(shot, ROOT / Path(target))

        # the toggle opens the session panel over the chat; choosing a session closes it again
        menu.click()
        assert menu.get_attribute("aria-expanded") == "true"
        panel = page.get_by_test_id("sidebar")
        assert panel.is_visible() and _box(page, "#sidebar")["width"] <= 390
        panel.locator("#sessions li .title").first.click()
        page.wait_for_function("document.getElementById('menu').getAttribute('aria-expanded') === 'false'")
        assert not panel.is_visible()
        page.wait_for_function("document.querySelectorAll('.msg.assistant').length === 2")
        # wide again (a rotated tablet, a resized window): the sidebar is back and the toggle gone
        page.set_viewport_size({"width": 1000, "height": 700})
        assert panel.is_visible() and not menu.is_visible()
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("width", [390, 1100])
def test_long_unbroken_tokens_wrap_inside_the_column(tmp_path, browser, width):
    server = Server(tmp_path, CONFIG).start()
    try:
        page = browser.new_page(viewport={"width": width, "height": 800}, locale="zh-CN")
        page.goto(server.url + "/")
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        token = "https://example.com/" + "套餐" * 60 + "x" * 150  # the echo double repeats it in the reply
        answer = _ask(page, token)
        assert token in answer.locator(".bubble").inner_text()
        column = _box(page, "#messages")
        for bubble in page.locator(".bubble").all():
            box = bubble.bounding_box()
            assert box["x"] + box["width"] <= column["x"] + column["width"], (box, column)
        _no_horizontal_overflow(page)
    finally:
        server.stop()


SLOW = {**CONFIG, "generator": {"name": "service_doubles:slow_generator", "delay": 0.25, "words": 200}}


@pytest.mark.slow
def test_stop_button_ends_the_turn_on_the_server_and_keeps_the_partial_answer_marked(tmp_path, browser):
    server = Server(tmp_path, SLOW).start()
    try:
        page = browser.new_page(viewport={"width": 1000, "height": 700}, locale="zh-CN")
        page.goto(server.url + "/")
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        page.get_by_test_id("input").fill("畅游套餐多少钱")
        page.get_by_test_id("input").press("Enter")
        answer = page.locator(".msg.assistant").first
        page.wait_for_function("document.querySelector('.msg.assistant .bubble')?.textContent.includes('w2 ')")
        assert page.get_by_test_id("stop").is_visible() and not page.get_by_test_id("send").is_visible()
        assert page.get_by_test_id("messages").get_attribute("aria-busy") == "true"
        page.get_by_test_id("stop").click()
        page.locator(".msg.assistant[data-done='true']").wait_for()
        assert answer.get_attribute("data-outcome") == "stopped"
        assert "已停止" in answer.locator(".note").inner_text()
        partial = answer.locator(".bubble").inner_text()
        assert partial.startswith("w0 w1 w2") and "w199" not in partial
        assert page.get_by_test_id("send").is_visible() and not page.get_by_test_id("stop").is_visible()
        assert page.get_by_test_id("messages").get_attribute("aria-busy") == "false"
        assert page.evaluate("document.activeElement.id") == "input"
        assert page.get_by_test_id("error").is_hidden()  # stopping is not an error

        # the server ended the turn and stored what was shown, marked "stopped"
        sessions = httpx.get(server.url + "/v1/sessions", params={"profile": "u1"}, timeout=10).json()["sessions"]
        assert len(sessions) == 1 and sessions[0]["turns"] == 2
        stored = httpx.get(f"{server.url}/v1/sessions/{sessions[0]['id']}", timeout=10).json()["messages"][1]
        assert stored["meta"]["interrupted"] == "stopped" and stored["content"].startswith("w0 w1 w2")
        assert len(stored["content"].split()) <= len(partial.split()) + 1

        # Escape stops too, and the next question in the same session is answered (nothing is left locked)
        page.get_by_test_id("input").fill("夜猫流量包")
        page.get_by_test_id("input").press("Enter")
        page.wait_for_function("document.querySelectorAll('.msg.assistant .bubble')[1]?.textContent.length > 0")
        page.keyboard.press("Escape")
        page.locator(".msg.assistant[data-done='true']").nth(1).wait_for()
        assert page.locator(".msg.assistant").nth(1).get_attribute("data-outcome") == "stopped"
        health = httpx.get(server.url + "/healthz", timeout=10).json()
        assert health["queue"]["running"] == 0

        # a reload in the middle of an answer (the browser drops the connection) freezes nothing either
        page.get_by_test_id("input").fill("余额")
        page.get_by_test_id("input").press("Enter")
        page.wait_for_function("document.querySelectorAll('.msg.assistant .bubble')[2]?.textContent.length > 0")
        page.reload()
        session_url = f"{server.url}/v1/sessions/{sessions[0]['id']}"
        for _ in range(100):  # the server notices the closed connection and stores the partial reply
            if httpx.get(session_url, timeout=10).json()["turns"] == 6:
                break
            page.wait_for_timeout(100)
        assert httpx.get(session_url, timeout=10).json()["messages"][5]["meta"]["interrupted"] == "disconnected"
        page.locator("#sessions li .title").first.click()
        page.wait_for_function("document.querySelectorAll('.msg.assistant').length === 3")
        assert page.locator(".msg.assistant[data-outcome='stopped']").count() == 3  # kept and marked
        page.get_by_test_id("input").fill("流量")  # the next turn in the same session streams again
        page.get_by_test_id("input").press("Enter")
        page.wait_for_function("document.querySelectorAll('.msg.assistant .bubble')[3]?.textContent.includes('w2 ')")
        page.get_by_test_id("stop").click()
        page.locator(".msg.assistant[data-done='true']").nth(3).wait_for()
    finally:
        server.stop()


@pytest.mark.slow
def test_client_timeout_gives_a_clear_message(tmp_path, browser):
    silent = {**CONFIG, "generator": {"name": "service_doubles:slow_generator", "first_delay": 30, "words": 1}}
    server = Server(tmp_path, silent).start()
    try:
        page = browser.new_page(viewport={"width": 1000, "height": 700}, locale="zh-CN")
        page.goto(server.url + "/?timeout=1")
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        page.get_by_test_id("input").fill("畅游套餐多少钱")
        page.get_by_test_id("input").press("Enter")
        page.locator(".msg.assistant[data-done='true']").wait_for(timeout=20_000)
        error = page.get_by_test_id("error")
        assert error.is_visible()
        assert "1 秒内没有收到服务器的回复" in error.inner_text()
        assert page.locator(".msg.assistant").first.get_attribute("data-outcome") == "failed"
        assert page.get_by_test_id("send").is_visible()
    finally:
        server.stop()


@pytest.mark.slow
def test_keyboard_only_use(tmp_path, browser):
    """Tab reaches the controls in reading order; Shift+Enter makes a new line, Enter sends; labels are there."""
    server = Server(tmp_path, CONFIG).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 700}, locale="zh-CN")
        failed: list[str] = []
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(server.url + "/")
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        icons = page.eval_on_selector_all("link[rel=icon]", "links => links.map(l => l.href)")
        assert len(icons) == 2
        for icon in icons:
            response = page.request.get(icon)
            assert response.ok and response.headers["content-type"].startswith("image/"), icon
        order = []
        for _ in range(6):
            page.keyboard.press("Tab")
            order.append(page.evaluate("document.activeElement.id"))
        assert order == ["skip", "profile", "lang-zh", "lang-en", "new-chat", "input"], order
        assert page.get_by_label("您的问题").evaluate("el => el.id") == "input"
        assert page.get_by_label("用户").evaluate("el => el.id") == "profile"
        assert page.get_by_test_id("messages").get_attribute("aria-live") == "polite"

        page.keyboard.type("第一行")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("畅游套餐")
        assert page.get_by_test_id("input").input_value() == "第一行\n畅游套餐"
        assert page.locator(".msg.user").count() == 0
        page.keyboard.press("Enter")
        page.locator(".msg.assistant[data-done='true']").wait_for()
        assert page.locator(".msg.user .bubble").inner_text() == "第一行\n畅游套餐"
        assert page.locator(".msg.assistant .bubble").inner_text().startswith("[第一行\n畅游套餐]")
        assert page.get_by_test_id("input").input_value() == ""
        assert page.get_by_test_id("status").inner_text() == "回答完毕"

        # the skip link and the session list work from the keyboard too
        page.keyboard.press("Enter")  # an empty box sends nothing
        assert page.locator(".msg.user").count() == 1
        page.get_by_test_id("new-chat").focus()
        page.keyboard.press("Enter")
        assert page.locator(".msg").count() == 0
        page.locator("#sessions li .title").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("document.querySelectorAll('.msg.assistant').length === 1")
        assert failed == []
    finally:
        server.stop()


@pytest.mark.slow
def test_each_profile_sees_only_its_own_sessions(tmp_path, browser):
    server = Server(tmp_path, CONFIG).start()
    try:
        for profile, question in (("u1", "畅游套餐 甲"), ("u2", "夜猫流量包 乙"), ("u2", "余额 丙"), (None, "话费 丁")):
            body = {"messages": [{"role": "user", "content": question}], "language": "zh"}
            if profile:
                body["profile"] = profile
            assert httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30).status_code == 200
        page = browser.new_page(viewport={"width": 1100, "height": 700}, locale="zh-CN")
        page.goto(server.url + "/")
        page.locator("#profile option[value='u1']").wait_for(state="attached")

        titles = page.locator("#sessions li .title")
        assert page.get_by_test_id("profile").input_value() == "u1"
        expect(titles).to_have_text(["畅游套餐 甲"])  # latest first
        page.get_by_test_id("profile").select_option("u2")
        expect(titles).to_have_text(["余额 丙", "夜猫流量包 乙"])
        page.get_by_test_id("profile").select_option("")
        expect(titles).to_have_text(["话费 丁"])
        page.get_by_test_id("profile").select_option("u2")
        page.reload()  # the chosen profile is remembered
        page.locator("#profile option[value='u1']").wait_for(state="attached")
        assert page.get_by_test_id("profile").input_value() == "u2"
        expect(titles).to_have_text(["余额 丙", "夜猫流量包 乙"])
        # a new question under u1 joins u1's list only
        page.get_by_test_id("profile").select_option("u1")
        _ask(page, "畅游套餐 戊")
        expect(titles).to_have_text(["畅游套餐 戊", "畅游套餐 甲"])
        assert page.get_by_test_id("more").is_hidden()
        # a long list comes 50 at a time
        for _ in range(55):
            assert httpx.post(server.url + "/v1/sessions", json={"profile": "u1"}, timeout=30).status_code == 201
        page.get_by_test_id("profile").select_option("u2")
        page.get_by_test_id("profile").select_option("u1")
        expect(titles).to_have_count(50)
        page.get_by_test_id("more").click()
        expect(titles).to_have_count(57)
        assert page.get_by_test_id("more").is_hidden()
    finally:
        server.stop()
