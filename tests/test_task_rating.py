"""Rating pages: the online test (goal, dialog, scores), offline ratings by two raters, export with means and
Krippendorff's alpha, bad scores refused; and one rated dialog in a real browser (Playwright + chromium)."""

from __future__ import annotations

import datetime as dt
import os
import socket
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from ragdial.rating import rating_app
from ragdial.task.dbgen import generate

TODAY = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "travel.sqlite"
    generate(path, seed=2, start=TODAY, days=4)
    return path


@pytest.fixture
def client(db_path, tmp_path):
    return TestClient(rating_app(tmp_path / "ratings.sqlite", db_path))


def test_online_test_flow(client):
    assert "在线测试" in client.get("/rating/online").text
    test = client.post("/rating/api/tests", json={"rater": "ann"}).json()
    assert test["goal_text"] and test["goal"]["subgoals"]
    answer = client.post(
        f"/rating/api/tests/{test['test_id']}/messages", json={"text": "明天从北京到上海的火车票"}
    ).json()
    assert "请问您要订哪一个" in answer["reply"]
    answer = client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "你会唱歌吗"}).json()
    assert "我可以帮您" in answer["reply"] and answer["in_scope"] is False
    bad = client.post(
        f"/rating/api/tests/{test['test_id']}/rating",
        json={"satisfaction": 3, "fluency": 0, "guidance": 1, "completed": 0},
    )
    assert bad.status_code == 422 and "satisfaction" in bad.text
    ok = client.post(
        f"/rating/api/tests/{test['test_id']}/rating",
        json={"satisfaction": 1, "fluency": 1, "guidance": 1, "completed": 0},
    )
    assert ok.status_code == 200
    assert client.post(f"/rating/api/tests/{test['test_id']}/messages", json={"text": "再见"}).status_code == 409
    summary = client.get("/rating/export.json").json()["summary"]["online"]
    assert summary["tests"] == 1 and summary["means"]["satisfaction"] == 1 and summary["means"]["turns"] == 2
    csv_text = client.get("/rating/export.csv?kind=online").text
    assert csv_text.splitlines()[0].startswith("id,rater,goal_text,satisfaction")


def test_offline_ratings_and_agreement(client):
    items = [
        {"source": "kdconv", "system": "template", "context": f"用户：问题{i}", "response": f"回答{i}"}
        for i in range(3)
    ]
    ids = client.post("/rating/api/items", json={"items": items}).json()["ids"]
    assert client.post("/rating/api/items", json={"items": [{"context": "", "response": "x"}]}).status_code == 422
    scores = {
        "ann": [(2, 2, 2, 5, 5), (1, 1, 1, 3, 3), (0, 0, 0, 1, 1)],
        "bob": [(2, 2, 1, 5, 4), (1, 1, 1, 3, 3), (0, 1, 0, 1, 2)],
    }
    names = ["informativeness", "coherence", "factual", "appropriateness", "accuracy"]
    for rater, rows in scores.items():
        for item_id, row in zip(ids, rows, strict=True):
            nxt = client.get("/rating/api/items/next", params={"rater": rater}).json()["item"]
            assert nxt["id"] == item_id
            r = client.post(
                f"/rating/api/items/{item_id}/rating",
                json={"rater": rater, "scores": dict(zip(names, row, strict=True))},
            )
            assert r.status_code == 200
        assert client.get("/rating/api/items/next", params={"rater": rater}).json()["item"] is None
    bad = client.post(
        f"/rating/api/items/{ids[0]}/rating",
        json={"rater": "cy", "scores": dict(zip(names, (2, 2, 2, 0, 5), strict=True))},
    )
    assert bad.status_code == 422 and "appropriateness" in bad.text
    summary = client.get("/rating/export.json").json()["summary"]["offline"]
    assert summary["ratings"] == 6 and summary["raters"] == 2
    assert summary["means"]["informativeness"] == pytest.approx(1.0)
    alpha = summary["krippendorff_alpha_interval"]
    assert alpha["informativeness"] == pytest.approx(1.0)  # the raters agree exactly
    assert 0 < alpha["accuracy"] < 1
    assert len(client.get("/rating/export.csv?kind=offline").text.strip().splitlines()) == 7


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_browser_rates_one_dialog(db_path, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    if not os.path.exists("/usr/bin/chromium"):
        pytest.skip("chromium not installed (Debian package chromium)")
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(rating_app(tmp_path / "ratings.sqlite", db_path), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # a guard against a hang on a loaded machine, not a speed check
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=10)
        pytest.fail(f"the rating server did not start on port {port} (thread alive: {thread.is_alive()})")
    base = f"http://127.0.0.1:{port}"
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page()
            page.goto(base + "/rating/online")
            page.fill("#rater", "browser-tester")
            page.click("#start-test")
            page.wait_for_selector("#goal:not(:empty)")
            for text in ("明天从北京到上海的火车票", "第一个", "确认"):
                count = page.locator(".system").count()
                page.fill("#message", text)
                page.press("#message", "Enter")
                page.wait_for_function(f"document.querySelectorAll('.system').length > {count}")
            assert "预订成功" in page.locator(".system").last.inner_text()
            page.select_option("select[name=satisfaction]", "2")
            page.select_option("select[name=fluency]", "1")
            page.select_option("select[name=guidance]", "1")
            page.select_option("select[name=completed]", "1")
            page.click("#submit-rating")
            page.wait_for_function("document.getElementById('status').textContent.includes('谢谢')")
            browser.close()
        exported = httpx.get(base + "/rating/export.json").json()
        row = exported["online"][0]
        assert (row["rater"], row["satisfaction"], row["fluency"], row["guidance"], row["completed"], row["turns"]) == (
            "browser-tester",
            2,
            1,
            1,
            1,
            3,
        )
    finally:
        server.should_exit = True
        thread.join(timeout=10)
