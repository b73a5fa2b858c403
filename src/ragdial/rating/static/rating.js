// Rating pages: plain JS, no build step. Talks to /rating/api/*.
"use strict";
const $ = (id) => document.getElementById(id);
const status = (text) => { $("status").textContent = text; };

async function api(path, body) {
  const response = await fetch("/rating/api/" + path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
  return data;
}

function formScores(form) {
  const scores = {};
  for (const select of form.querySelectorAll("select")) scores[select.name] = parseInt(select.value, 10);
  return scores;
}

function addTurn(who, text) {
  const div = document.createElement("div");
  div.className = "turn " + who;
  div.textContent = (who === "user" ? "您: " : "系统: ") + text;
  $("log").appendChild(div);
  $("log").scrollTop = $("log").scrollHeight;
}

function online() {
  let testId = null;
  $("start-test").addEventListener("click", async () => {
    const rater = $("rater").value.trim();
    if (!rater) { status("请填写评测人 / enter a rater name"); return; }
    try {
      const test = await api("tests", { rater });
      testId = test.test_id;
      $("goal").textContent = test.goal_text;
      $("test").hidden = false;
      $("start").hidden = true;
      status("测试 " + testId + " 开始 / test started");
    } catch (err) { status("错误 error: " + err.message); }
  });
  $("chat").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("message").value.trim();
    if (!text || testId === null) return;
    $("message").value = "";
    addTurn("user", text);
    try {
      const answer = await api("tests/" + testId + "/messages", { text });
      addTurn("system", answer.reply);
    } catch (err) { status("错误 error: " + err.message); }
  });
  $("rate").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("tests/" + testId + "/rating", formScores($("rate")));
      status("已提交，谢谢！/ Rating saved, thank you.");
      $("rate").hidden = true;
      $("chat").hidden = true;
    } catch (err) { status("错误 error: " + err.message); }
  });
}

function offline() {
  let itemId = null;
  async function next() {
    const rater = $("rater").value.trim();
    if (!rater) { status("请填写评测人 / enter a rater name"); return; }
    const data = await api("items/next?rater=" + encodeURIComponent(rater));
    if (!data.item) { $("item").hidden = true; status("没有待评的条目了 / nothing left to rate"); return; }
    itemId = data.item.id;
    $("source").textContent = data.item.source + " · " + data.item.system;
    $("context").textContent = data.item.context;
    $("knowledge").textContent = data.item.knowledge || "-";
    $("response").textContent = data.item.response;
    $("item").hidden = false;
    status("条目 item " + itemId);
  }
  $("next-item").addEventListener("click", () => next().catch((err) => status("错误 error: " + err.message)));
  $("rate-item").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("items/" + itemId + "/rating", { rater: $("rater").value.trim(), scores: formScores($("rate-item")) });
      await next();
    } catch (err) { status("错误 error: " + err.message); }
  });
}

if (document.body.dataset.page === "online") online(); else offline();
