// ragdial web page: streaming chat over /v1/chat/completions with cited knowledge, a session list, zh/en UI.
"use strict";

const STRINGS = {
  zh: {
    tagline: "知识问答客服", profile: "用户", newChat: "新对话", sessions: "会话", send: "发送", apiKey: "API 密钥",
    save: "保存", placeholder: "输入您的问题，回车发送（Shift+回车换行）", empty: "选择用户，然后开始提问。",
    cited: "引用的知识", noKnowledge: "未检索知识", needs: "需要知识", lookups: "查询",
    user_profile: "用户信息", product: "产品", faq: "常见问题", global: "全局知识", untitled: "（新对话）",
    deleteTitle: "删除会话", firstToken: "首字", total: "全部", noProfile: "（不指定用户）",
  },
  en: {
    tagline: "customer service with cited knowledge", profile: "User", newChat: "New chat", sessions: "Sessions",
    send: "Send", apiKey: "API key", save: "Save", placeholder: "Ask a question; Enter sends, Shift+Enter for a new line",
    empty: "Pick a user, then ask a question.", cited: "Cited knowledge", noKnowledge: "no knowledge looked up",
    needs: "needs knowledge", lookups: "look-ups", user_profile: "user profile", product: "product", faq: "FAQ",
    global: "global knowledge", untitled: "(new chat)", deleteTitle: "Delete session", firstToken: "first token",
    total: "total", noProfile: "(no user)",
  },
};

const browserLang = (navigator.language || "zh").slice(0, 2) === "en" ? "en" : "zh";
const state = { lang: localStorage.getItem("ragdial.lang") || browserLang, sessionId: null, busy: false };
if (!STRINGS[state.lang]) state.lang = "zh";

const $ = (id) => document.getElementById(id);
const t = (key) => STRINGS[state.lang][key] || key;

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = localStorage.getItem("ragdial.apiKey");
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers() });
  if (response.status === 401) $("auth").hidden = false;
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
  return body;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

function applyLanguage() {
  document.documentElement.lang = state.lang;
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("input").placeholder = t("placeholder");
  document.querySelectorAll(".lang button").forEach((b) => b.classList.toggle("active", b.dataset.lang === state.lang));
}

async function loadProfiles() {
  const select = $("profile");
  const chosen = select.value;
  const body = await api("/v1/profiles?language=" + state.lang);
  select.innerHTML = "";
  const none = new Option(t("noProfile"), "");
  select.add(none);
  for (const p of body.profiles) select.add(new Option(`${p.name} · ${p.id}`, p.id));
  if (chosen && [...select.options].some((o) => o.value === chosen)) select.value = chosen;
  else if (body.profiles.length) select.value = body.profiles[0].id;
}

async function loadSessions() {
  const body = await api("/v1/sessions?limit=50");
  const list = $("sessions");
  list.innerHTML = "";
  for (const s of body.sessions) {
    const li = document.createElement("li");
    li.dataset.id = s.id;
    li.classList.toggle("active", s.id === state.sessionId);
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = (s.title || t("untitled")) + (s.user ? ` · ${s.user}` : "");
    title.title = `${s.language} · ${s.turns} turns`;
    const del = document.createElement("button");
    del.className = "delete";
    del.type = "button";
    del.title = t("deleteTitle");
    del.textContent = "×";
    del.onclick = async (event) => {
      event.stopPropagation();
      await api("/v1/sessions/" + s.id, { method: "DELETE" }).catch((e) => showError(e.message));
      if (state.sessionId === s.id) newChat();
      loadSessions();
    };
    li.append(title, del);
    li.onclick = () => openSession(s.id);
    list.append(li);
  }
}

function newChat() {
  state.sessionId = null;
  renderEmpty();
  document.querySelectorAll("#sessions li").forEach((li) => li.classList.remove("active"));
  $("input").focus();
}

function renderEmpty() {
  $("messages").innerHTML = `<p class="empty">${t("empty")}</p>`;
}

async function openSession(id) {
  try {
    const session = await api("/v1/sessions/" + id);
    state.sessionId = id;
    if (session.language !== state.lang) { state.lang = session.language; applyLanguage(); await loadProfiles(); }
    if (session.user) $("profile").value = session.user;
    $("messages").innerHTML = "";
    for (const m of session.messages) {
      const el = addMessage(m.role, m.content);
      if (m.role === "assistant") {
        renderKnowledge(el, m.knowledge, m.meta.decision, m.meta.timings);
        el.dataset.done = "true";
      }
    }
    document.querySelectorAll("#sessions li").forEach((li) => li.classList.toggle("active", li.dataset.id === id));
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

function renderKnowledge(el, knowledge, decision, timings) {
  el.querySelectorAll(".meta, .citations").forEach((n) => n.remove());
  const meta = document.createElement("div");
  meta.className = "meta";
  const parts = [];
  if (decision) {
    if (decision.needs_knowledge) parts.push(`${t("lookups")}: ${decision.lookups.map(t).join(", ")}`);
    else parts.push(t("noKnowledge"));
    if (decision.label) parts.push(decision.label);
  }
  if (timings && timings.total_ms !== undefined) {
    parts.push(`${t("firstToken")} ${Math.round(timings.first_token_ms)} ms · ${t("total")} ${Math.round(timings.total_ms)} ms`);
  }
  meta.textContent = parts.join(" · ");
  el.append(meta);
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

async function send(text) {
  state.busy = true;
  $("send").disabled = true;
  showError("");
  addMessage("user", text);
  const el = addMessage("assistant", "");
  el.classList.add("streaming");
  const bubble = el.querySelector(".bubble");
  const body = { messages: [{ role: "user", content: text }], stream: true };
  if (state.sessionId) body.session_id = state.sessionId;
  else {
    body.language = state.lang;
    if ($("profile").value) body.profile = $("profile").value;
  }
  let knowledge = [], decision = null;
  try {
    const response = await fetch("/v1/chat/completions", { method: "POST", headers: headers(), body: JSON.stringify(body) });
    if (!response.ok) {
      if (response.status === 401) $("auth").hidden = false;
      const err = await response.json().catch(() => ({}));
      throw new Error((err.error && err.error.message) || response.statusText);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (!data || data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        const ext = chunk.ragdial || {};
        if (ext.session_id && !state.sessionId) state.sessionId = ext.session_id;
        if (ext.knowledge) { knowledge = ext.knowledge; decision = ext.decision; renderKnowledge(el, knowledge, decision, null); }
        const delta = chunk.choices[0].delta || {};
        if (delta.content) { bubble.textContent += delta.content; el.scrollIntoView({ block: "end" }); }
        if (chunk.choices[0].finish_reason) renderKnowledge(el, knowledge, decision, ext.timings);
      }
    }
  } catch (e) {
    showError(e.message);
  } finally {
    el.classList.remove("streaming");
    el.dataset.done = "true";
    state.busy = false;
    $("send").disabled = false;
    loadSessions().catch(() => {});
  }
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
  $("new-chat").onclick = newChat;
  $("profile").onchange = newChat;
  document.querySelectorAll(".lang button").forEach((b) => {
    b.onclick = async () => {
      if (b.dataset.lang === state.lang) return;
      state.lang = b.dataset.lang;
      localStorage.setItem("ragdial.lang", state.lang);
      applyLanguage();
      newChat();
      await loadProfiles().catch((e) => showError(e.message));
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
