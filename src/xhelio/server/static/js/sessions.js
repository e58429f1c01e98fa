// The session sidebar: new, open, rename, delete. Lists GET /sessions newest first and
// marks this tab's session; opening one makes it this tab's session and shows its chat.

import { api, sessionPath } from "./api.js";
import { onChange, setSession, state } from "./state.js";
import { fmtAgo, h, setChildren, toastError } from "./ui.js";

export function mountSessions(root) {
  const list = h("ul.session-list", { "aria-label": "Sessions" });
  const status = h("div.session-status", { role: "status" });
  const newButton = h("button.primary.block", { id: "new-session", onclick: newSession, title: "Start a new session (Alt+N)" }, "+ New session");
  setChildren(root, h("div.side-head", h("h2", "Sessions"), newButton), status, list);
  let sessions = [];

  async function refresh() {
    try {
      const body = await api("/sessions", { query: { limit: 50 } });
      sessions = body.sessions || [];
      status.textContent = "";
      draw();
    } catch (err) {
      status.textContent = `Sessions unavailable: ${err.message}`;
    }
  }

  function draw() {
    const items = sessions.map((s) => item(s));
    if (!sessions.length) items.push(h("li.empty", "No sessions yet. Ask something to start one."));
    setChildren(list, items);
  }

  function item(s) {
    const current = s.id === state.sessionId;
    const open = h(
      "a.session-open",
      { href: `/chat/${s.id}`, "data-link": "", "data-page": "chat-session", "aria-current": current ? "true" : null, title: s.title || s.id },
      h("span.session-title", s.title || "Untitled session"),
      h("span.session-meta", fmtAgo(s.updated || s.created)),
    );
    open.addEventListener("click", () => setSession(s.id));
    const rename = h("button.icon", { title: "Rename", "aria-label": `Rename ${s.title || "session"}`, onclick: () => startRename(li, s) }, "✎");
    const del = h("button.icon", { title: "Delete", "aria-label": `Delete ${s.title || "session"}`, onclick: () => remove(s) }, "✕");
    const li = h(`li.session${current ? ".current" : ""}`, { dataset: { sid: s.id } }, open, h("span.session-actions", rename, del));
    return li;
  }

  function startRename(li, s) {
    const input = h("input.rename", { value: s.title || "", "aria-label": "New session title", maxlength: 200 });
    const finish = async (save) => {
      if (!save || !input.value.trim() || input.value.trim() === s.title) return draw();
      try {
        await api(sessionPath(s.id), { method: "PATCH", body: { title: input.value.trim() } });
        await refresh();
      } catch (err) {
        toastError(err, "Rename failed: ");
        draw();
      }
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") finish(true);
      if (e.key === "Escape") finish(false);
    });
    input.addEventListener("blur", () => finish(true));
    setChildren(li, input);
    input.focus();
    input.select();
  }

  async function remove(s) {
    if (!confirm(`Delete session "${s.title || s.id}" and its data?`)) return;
    try {
      await api(sessionPath(s.id), { method: "DELETE" });
      if (s.id === state.sessionId) {
        setSession(null);
        window.xhelioNavigate("/");
      }
      await refresh();
    } catch (err) {
      toastError(err, "Delete failed: ");
    }
  }

  function newSession() {
    setSession(null);
    window.xhelioNavigate("/");
    draw();
  }

  document.addEventListener("keydown", (e) => {
    if (e.altKey && (e.key === "n" || e.key === "N")) {
      e.preventDefault();
      newSession();
    }
  });
  onChange((what) => {
    if (what === "sessions") refresh();
    if (what === "session") draw();
  });
  refresh();
}
