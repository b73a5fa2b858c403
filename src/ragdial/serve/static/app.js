// ragdial web page: streaming chat over /v1/chat/completions with cited knowledge, the current profile's sessions,
// a stop button and a client timeout, zh/en UI, a collapsible session panel on narrow screens.
"use strict";

const STRINGS = {
  zh: {
    tagline: "知识问答客服", profile: "用户", newChat: "新对话", sessions: "会话", send: "发送", stop: "停止",
    apiKey: "API 密钥", save: "保存", inputLabel: "您的问题", skip: "跳到输入框",
    placeholder: "输入您的问题，回车发送（Shift+回车换行）", empty: "选择用户，然后开始提问。",
    cited: "引用的知识", noKnowledge: "未检索知识", needs: "需要知识", lookups: "查询",
    user_profile: "用户信息", product: "产品", faq: "常见问题", global: "全局知识", untitled: "（新对话）",
    deleteTitle: "删除会话", firstToken: "首字", total: "全部", noProfile: "（不指定用户）", turns: "轮",
    answering: "正在回答…", answered: "回答完毕", stopped: "已停止：回答不完整。",
    timeout: "{s} 秒内没有收到服务器的回复，已停止等待。请稍后重试。",
    network: "与服务器的连接中断，回答不完整。请检查网络后重试。",
    cutShort: "回答在中途结束（服务器关闭了连接），回答不完整。",
    busy: "服务繁忙，请 {s} 秒后重试。", conversation: "对话", more: "更多会话",
    policy: "回答策略", answer: "据知识回答", not_in_knowledge: "知识中没有", action: "无法代办的操作", small_talk: "闲聊",
    other_language: "其他语言", query: "检索问题", verified: "已核对", claims: "项事实", unsupported: "未核实",
    fallback: "改用", retry: "约束重试", extractive: "抽取式回答",
  },
  en: {
    tagline: "customer service with cited knowledge", profile: "User", newChat: "New chat", sessions: "Sessions",
    send: "Send", stop: "Stop", apiKey: "API key", save: "Save", inputLabel: "Your question", skip: "Skip to the question box",
    placeholder: "Ask a question; Enter sends, Shift+Enter for a new line",
    empty: "Pick a user, then ask a question.", cited: "Cited knowledge", noKnowledge: "no knowledge looked up",
    needs: "needs knowledge", lookups: "look-ups", user_profile: "user profile", product: "product", faq: "FAQ",
    global: "global knowledge", untitled: "(new chat)", deleteTitle: "Delete session", firstToken: "first token",
    total: "total", noProfile: "(no user)", turns: "turns",
    answering: "Answering…", answered: "Answer complete", stopped: "Stopped: the answer is incomplete.",
    timeout: "No reply from the server for {s} s; stopped waiting. Please try again later.",
    network: "The connection to the server was lost; the answer is incomplete. Check the network and try again.",
    cutShort: "The answer ended early (the server closed the connection); it is incomplete.",
    busy: "The service is busy; please try again in {s} s.", conversation: "Conversation", more: "More sessions",
    policy: "policy", answer: "answer from knowledge", not_in_knowledge: "not in the knowledge",
    action: "action it cannot perform", small_talk: "small talk", other_language: "other language",
    query: "searched", verified: "verified", claims: "claims", unsupported: "unsupported", fallback: "fallback",
    retry: "constrained retry", extractive: "extractive answer",
  },
};

const PAGE = 50;  // sessions listed at first; "more" lists 50 more (the server's limit is 1000)
const DEFAULT_TIMEOUT_S = 60;  // no byte from the server for this long ends the wait (?timeout=SECONDS overrides)
const NARROW = window.matchMedia("(max-width: 700px)");

const browserLang = (navigator.language || "zh").slice(0, 2) === "en" ? "en" : "zh";
const requestedTimeout = Number(new URLSearchParams(location.search).get("timeout"));
const state = {
  lang: localStorage.getItem("ragdial.lang") || browserLang,
  sessionId: null,
  busy: false,
  stream: null,  // {controller, reason, id} of the reply being streamed
  timeoutS: requestedTimeout > 0 ? requestedTimeout : DEFAULT_TIMEOUT_S,
  listed: PAGE,  // how many sessions the list asks for
};
if (!STRINGS[state.lang]) state.lang = "zh";

const $ = (id) => document.getElementById(id);
const t = (key, values = {}) => (STRINGS[state.lang][key] || key).replace(/\{(\w+)\}/g, (_, k) => values[k]);

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = localStorage.getItem("ragdial.apiKey");
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function failure(response) {
  if (response.status === 401) $("auth").hidden = false;
  const body = await response.json().catch(() => ({}));
  if (response.status === 503 && response.headers.get("Retry-After")) {
    return new Error(t("busy", { s: response.headers.get("Retry-After") }));
  }
  return new Error((body.error && body.error.message) || response.statusText || `HTTP ${response.status}`);
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers() });
  if (!response.ok) throw await failure(response);
  return response.json();
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

function announce(message) {
  $("status").textContent = message;
}

function currentProfile() {
  return $("profile").value || null;
}

// A session's URL for the chosen profile: the server answers 404 for another profile's session.
function sessionPath(id) {
  return `/v1/sessions/${encodeURIComponent(id)}?profile=${encodeURIComponent(currentProfile() || "")}`;
}

function applyLanguage() {
  document.documentElement.lang = state.lang;
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("input").placeholder = t("placeholder");
  $("messages").setAttribute("aria-label", t("conversation"));
  document.querySelectorAll(".lang button").forEach((b) => {
    b.classList.toggle("active", b.dataset.lang === state.lang);
    b.setAttribute("aria-pressed", String(b.dataset.lang === state.lang));
  });
}

// ---- the session panel (a sidebar on wide screens, a toggled panel below 700 px)

function setSidebar(open) {
  document.body.classList.toggle("sidebar-open", open);
  $("menu").setAttribute("aria-expanded", String(open));
}

function closeSidebarIfNarrow() {
  if (NARROW.matches && document.body.classList.contains("sidebar-open")) setSidebar(false);
}

async function loadProfiles() {
  const select = $("profile");
  const chosen = select.options.length ? select.value : localStorage.getItem("ragdial.profile");
  const body = await api("/v1/profiles?language=" + state.lang);
  select.innerHTML = "";
  select.add(new Option(t("noProfile"), ""));
  for (const p of body.profiles) select.add(new Option(`${p.name} · ${p.id}`, p.id));
  if (chosen !== null && [...select.options].some((o) => o.value === chosen)) select.value = chosen;
  else if (body.profiles.length) select.value = body.profiles[0].id;
}

// Only the chosen profile's sessions: the server is asked for them, and anything else it returns is dropped.
async function loadSessions() {
  const profile = currentProfile();
  const query = new URLSearchParams({ limit: String(state.listed) });
  if (profile) query.set("profile", profile);
  const body = await api("/v1/sessions?" + query);
  if (profile !== currentProfile()) return;  // the profile changed while the list was loading
  const list = $("sessions");
  list.innerHTML = "";
  for (const s of body.sessions.filter((s) => (s.user || null) === profile)) {
    const li = document.createElement("li");
    li.dataset.id = s.id;
    const title = document.createElement("button");
    title.type = "button";
    title.className = "title";
    title.textContent = s.title || t("untitled");
    title.title = `${s.language} · ${s.turns} ${t("turns")}`;
    title.onclick = () => openSession(s.id);
    const del = document.createElement("button");
    del.className = "delete";
    del.type = "button";
    del.title = t("deleteTitle");
    del.setAttribute("aria-label", `${t("deleteTitle")}: ${title.textContent}`);
    del.textContent = "×";
    del.onclick = async () => {
      await api(sessionPath(s.id), { method: "DELETE" }).catch((e) => showError(e.message));
      if (state.sessionId === s.id) newChat();
      loadSessions().catch((e) => showError(e.message));
    };
    li.append(title, del);
    list.append(li);
  }
  $("more").hidden = body.sessions.length < state.listed || state.listed >= 1000;
  markActive();
}

function markActive() {
  document.querySelectorAll("#sessions li").forEach((li) => {
    const active = li.dataset.id === state.sessionId;
    li.classList.toggle("active", active);
    const button = li.querySelector(".title");
    if (active) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  });
}

function newChat() {
  stopStream("stop");
  state.sessionId = null;
  showError("");
  renderEmpty();
  markActive();
  closeSidebarIfNarrow();
  $("input").focus();
}

function renderEmpty() {
  $("messages").innerHTML = `<p class="empty">${t("empty")}</p>`;
}

async function openSession(id) {
  stopStream("stop");
  try {
    const session = await api(sessionPath(id));
    state.sessionId = id;
    showError("");
    if (session.language !== state.lang) { state.lang = session.language; applyLanguage(); await loadProfiles(); }
    $("profile").value = session.user || "";
    $("messages").innerHTML = "";
    for (const m of session.messages) {
      const el = addMessage(m.role, m.content);
      if (m.role === "assistant") {
        renderKnowledge(el, m.knowledge, m.meta.decision, m.meta.timings, m.meta.grounding);
        if (m.meta.interrupted) markIncomplete(el, "stopped", t("stopped"));
        el.dataset.done = "true";
      }
    }
    markActive();
    closeSidebarIfNarrow();
    $("input").focus();
  } catch (e) { showError(e.message); }
}

function addMessage(role, text) {
  const empty = $("messages").querySelector(".empty");
  if (empty) empty.remove();
  const el = document.createElement("div");
  el.className = "msg " + role;
  el.dataset.testid = role === "user" ? "user-message" : "assistant-message";
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  bubble.textContent = text;
  el.append(bubble);
  $("messages").append(el);
  el.scrollIntoView({ block: "end" });
  return el;
}

function markIncomplete(el, kind, message) {
  el.classList.add(kind);
  el.dataset.outcome = kind;
  const note = document.createElement("div");
  note.className = "note";
  note.textContent = message;
  el.append(note);
}

function renderGrounding(el, grounding) {
  // the answer policy, the query retrieval was asked, and the check of every claim in the reply (issue 13)
  if (!grounding) return;
  const box = document.createElement("div");
  box.className = "grounding" + (grounding.verified ? " verified" : " unverified");
  box.dataset.testid = "grounding";
  const parts = [`${t("policy")}: ${t(grounding.policy)}`];
  if (grounding.rewrite && grounding.rewrite.query !== grounding.rewrite.original) parts.push(`${t("query")}: ${grounding.rewrite.query}`);
  const n = (grounding.claims || []).length;
  parts.push(grounding.verified ? `✓ ${t("verified")} (${n} ${t("claims")})`
    : `⚠ ${t("unsupported")}: ${(grounding.unsupported || []).map((c) => c.text).join(", ")}`);
  if (grounding.fallback) parts.push(`${t("fallback")}: ${t(grounding.fallback)}`);
  box.textContent = parts.join(" · ");
  el.append(box);
}

function renderKnowledge(el, knowledge, decision, timings, grounding) {
  el.querySelectorAll(".meta, .citations, .grounding").forEach((n) => n.remove());
  const meta = document.createElement("div");
  meta.className = "meta";
  const parts = [];
  if (decision) {
    if (decision.needs_knowledge) parts.push(`${t("lookups")}: ${decision.lookups.map((l) => t(l)).join(", ")}`);
    else parts.push(t("noKnowledge"));
    if (decision.label) parts.push(decision.label);
  }
  if (timings && timings.total_ms !== undefined) {
    parts.push(`${t("firstToken")} ${Math.round(timings.first_token_ms)} ms · ${t("total")} ${Math.round(timings.total_ms)} ms`);
  }
  meta.textContent = parts.join(" · ");
  el.append(meta);
  renderGrounding(el, grounding);
  if (!knowledge || !knowledge.length) return;
  const list = document.createElement("ul");
  list.className = "citations";
  list.dataset.testid = "citations";
  list.setAttribute("aria-label", t("cited"));
  for (const k of knowledge) {
    const li = document.createElement("li");
    li.dataset.source = k.source;
    li.dataset.testid = "citation";
    const badge = document.createElement("span");
    badge.className = "badge " + k.source;
    badge.textContent = t(k.source);
    const text = document.createElement("span");
    text.textContent = k.text;
    const id = document.createElement("span");
    id.className = "cid";
    id.textContent = k.id;
    li.append(badge, text, id);
    list.append(li);
  }
  el.append(list);
}

// ---- streaming one reply

function setBusy(busy) {
  state.busy = busy;
  $("send").hidden = busy;
  $("send").disabled = busy;
  $("stop").hidden = !busy;
  $("messages").setAttribute("aria-busy", String(busy));  // screen readers read the answer once it is complete
}

// End the reply being streamed: "stop" (the user), "timeout" (no byte for timeoutS seconds). A stop asks the
// server to end the turn (it stores the partial reply marked "stopped") and then closes the connection; without a
// stream id yet (the turn has not started) closing the connection is enough: the server cancels the turn.
async function stopStream(reason) {
  const stream = state.stream;
  if (!stream || stream.reason) return;
  stream.reason = reason;
  if (reason === "stop" && stream.id) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 5000);
    await fetch(`/v1/chat/completions/${encodeURIComponent(stream.id)}/stop`, {
      method: "POST", headers: headers(), signal: stop.signal,
    }).catch(() => {});
    clearTimeout(timer);
  }
  stream.controller.abort();
}

async function* serverEvents(response, stream) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    stream.arm();
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      yield JSON.parse(data);
    }
  }
}

async function send(text) {
  setBusy(true);
  showError("");
  announce(t("answering"));
  addMessage("user", text);
  const el = addMessage("assistant", "");
  el.classList.add("streaming");
  const bubble = el.querySelector(".bubble");
  const body = { messages: [{ role: "user", content: text }], stream: true };
  if (state.sessionId) body.session_id = state.sessionId;
  else {
    body.language = state.lang;
    if (currentProfile()) body.profile = currentProfile();
  }
  const stream = { controller: new AbortController(), reason: null, id: null, timer: null };
  stream.arm = () => {
    clearTimeout(stream.timer);
    stream.timer = setTimeout(() => stopStream("timeout"), state.timeoutS * 1000);
  };
  state.stream = stream;
  stream.arm();
  const newSession = !state.sessionId;
  let knowledge = [], decision = null, finished = false;
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: headers(), body: JSON.stringify(body), signal: stream.controller.signal,
    });
    if (!response.ok) throw await failure(response);
    for await (const chunk of serverEvents(response, stream)) {
      if (chunk.error) throw new Error(chunk.error.message);
      stream.id = chunk.id || stream.id;
      const ext = chunk.ragdial || {};
      if (ext.session_id && !state.sessionId) { state.sessionId = ext.session_id; markActive(); }
      if (ext.knowledge) { knowledge = ext.knowledge; decision = ext.decision; renderKnowledge(el, knowledge, decision, null); }
      const delta = chunk.choices[0].delta || {};
      if (delta.content) { bubble.textContent += delta.content; el.scrollIntoView({ block: "end" }); }
      if (chunk.choices[0].finish_reason) {
        finished = !ext.interrupted;  // a stopped turn ends with a final chunk marked interrupted
        if (ext.knowledge) knowledge = ext.knowledge;  // the verified reply's citations (a cut turn cites none)
        renderKnowledge(el, knowledge, decision, ext.timings, ext.grounding);
      }
    }
    if (stream.reason === "stop") markIncomplete(el, "stopped", t("stopped"));
    else if (!finished) markIncomplete(el, "failed", t("cutShort"));
  } catch (e) {
    if (stream.reason === "stop") {
      markIncomplete(el, "stopped", t("stopped"));
    } else if (stream.reason === "timeout") {
      markIncomplete(el, "failed", t("timeout", { s: state.timeoutS }));
      showError(t("timeout", { s: state.timeoutS }));
    } else {
      markIncomplete(el, "failed", e instanceof TypeError ? t("network") : e.message);
      showError(e instanceof TypeError ? t("network") : e.message);
    }
  } finally {
    clearTimeout(stream.timer);
    stream.controller.abort();  // a reply that ended in an error event: close the connection too
    if (state.stream === stream) state.stream = null;
    if (newSession && !finished && state.sessionId) await forgetIfNotStored(state.sessionId);
    el.classList.remove("streaming");
    el.dataset.done = "true";
    setBusy(false);
    announce(el.dataset.outcome ? el.querySelector(".note").textContent : t("answered"));
    loadSessions().catch(() => {});
  }
}

// A new session whose first turn ended before any reply text is not stored: the next question starts afresh.
async function forgetIfNotStored(id) {
  const response = await fetch(sessionPath(id), { headers: headers() }).catch(() => null);
  if (response && response.status === 404 && state.sessionId === id) { state.sessionId = null; markActive(); }
}

function wire() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("input").value.trim();
    if (!text || state.busy) return;
    $("input").value = "";
    send(text);
  });
  $("input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    if (state.busy) stopStream("stop");
    else if (document.body.classList.contains("sidebar-open")) { setSidebar(false); $("menu").focus(); }
  });
  $("stop").onclick = () => { $("input").focus(); stopStream("stop"); };
  $("menu").onclick = () => {
    const open = !document.body.classList.contains("sidebar-open");
    setSidebar(open);
    if (open) $("new-chat").focus();
  };
  NARROW.addEventListener("change", () => { if (!NARROW.matches) setSidebar(false); });
  $("new-chat").onclick = newChat;
  $("more").onclick = () => {
    state.listed = Math.min(1000, state.listed + PAGE);
    loadSessions().catch((e) => showError(e.message));
  };
  $("profile").onchange = () => {
    state.listed = PAGE;
    localStorage.setItem("ragdial.profile", $("profile").value);
    newChat();
    loadSessions().catch((e) => showError(e.message));
  };
  document.querySelectorAll(".lang button").forEach((b) => {
    b.onclick = async () => {
      if (b.dataset.lang === state.lang) return;
      state.lang = b.dataset.lang;
      localStorage.setItem("ragdial.lang", state.lang);
      applyLanguage();
      newChat();
      try {
        await loadProfiles();
        await loadSessions();
      } catch (e) { showError(e.message); }
    };
  });
  $("save-key").onclick = () => {
    localStorage.setItem("ragdial.apiKey", $("api-key").value.trim());
    $("auth").hidden = true;
    start();
  };
}

async function start() {
  try {
    const health = await fetch("/healthz").then((r) => r.json());
    document.querySelectorAll(".lang button").forEach((b) => { b.hidden = !health.languages.includes(b.dataset.lang); });
    if (!health.languages.includes(state.lang)) state.lang = health.languages[0];
  } catch (e) { /* the API calls below report it */ }
  applyLanguage();
  renderEmpty();
  try {
    await loadProfiles();
    await loadSessions();
  } catch (e) { showError(e.message); }
}

wire();
start();
