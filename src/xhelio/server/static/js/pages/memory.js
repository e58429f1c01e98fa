// The Memory page: what xhelio remembers across sessions (preferences, lessons learned,
// reflections on errors, session summaries). List, filter and search them; add one; edit
// its text or scopes (the old version is kept, archived); switch one off; delete one.
// Texts are shown with textContent only, so a stored text can never become markup.

import { api } from "../api.js";
import { errorBox, fmtTime, h, infoBox, loading, setChildren, toast, toastError } from "../ui.js";

const TYPES = { preference: "Preference", pitfall: "Lesson", reflection: "Reflection", summary: "Session summary" };

export function mount(root) {
  const status = h("div.mem-status", { id: "memory-status", "aria-live": "polite" });
  const list = h("div.mem-list", { id: "memory-list", "aria-label": "Memories" }, loading());
  const query = h("input", { id: "memory-search", type: "search", placeholder: "Search memories, e.g. BGSEc or log scale", "aria-label": "Search memories" });
  const type = h("select", { id: "memory-type", "aria-label": "Type" }, h("option", { value: "" }, "All types"), Object.entries(TYPES).map(([v, t]) => h("option", { value: v }, t)));
  const page = { list, status, query, type };
  const search = h("form.mem-search", { onsubmit: (e) => { e.preventDefault(); showList(page); } },
    query, type, h("button", { type: "submit" }, "Search"));
  setChildren(root, h("div.memory",
    h("div.page-head", h("h1", "Memory"), h("span.muted", "What xhelio remembers from earlier sessions; agents see these as quoted notes, never as instructions.")),
    status, search, addForm(page), list));
  showStatus(page);
  showList(page);
}

async function showStatus(page) {
  try {
    const s = await api("/memory/status");
    const counts = Object.entries(s.by_type).map(([t, n]) => `${n} ${(TYPES[t] || t).toLowerCase()}${n === 1 ? "" : "s"}`).join(", ") || "no memories yet";
    setChildren(page.status,
      h("p", h(`span.badge.${s.enabled ? "online" : "offline"}`, s.enabled ? "memory on" : "memory off"), " ", counts,
        s.disabled ? ` · ${s.disabled} switched off` : "", s.archived ? ` · ${s.archived} archived version${s.archived === 1 ? "" : "s"}` : ""),
      h("p.muted.small", s.search));
  } catch (err) {
    setChildren(page.status, errorBox(err, "Memory status could not be loaded"));
  }
}

function addForm(page) {
  const text = h("textarea", { id: "memory-new-text", rows: 2, maxlength: 2000, placeholder: "e.g. Plot particle fluxes on a log scale", "aria-label": "New memory" });
  const type = h("select", { id: "memory-new-type", "aria-label": "Type of the new memory" }, Object.entries(TYPES).map(([v, t]) => h("option", { value: v }, t)));
  const scopes = h("input", { id: "memory-new-scopes", type: "text", value: "generic", "aria-label": "Scopes", title: "generic, data_ops, visualization or mission:<ID>, comma separated" });
  return h("details.mem-add", h("summary", "Add a memory"),
    h("form", { onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api("/memory", { method: "POST", body: { content: text.value, type: type.value, scopes: splitScopes(scopes.value) } });
        text.value = "";
        toast("Remembered.");
        refresh(page);
      } catch (err) {
        toastError(err, "Not saved: ");
      }
    } }, text, h("div.mem-row", type, scopes, h("button.primary", { type: "submit" }, "Remember"))));
}

function splitScopes(text) {
  return text.split(",").map((s) => s.trim()).filter(Boolean);
}

function refresh(page) {
  showStatus(page);
  showList(page);
}

async function showList(page) {
  setChildren(page.list, loading());
  const q = page.query.value.trim();
  let answer;
  try {
    answer = q
      ? await api("/memory/search", { query: { q } })
      : await api("/memory", { query: { type: page.type.value || undefined } });
  } catch (err) {
    setChildren(page.list, errorBox(err, "Memories could not be listed"));
    return;
  }
  const shown = answer.memories.filter((m) => !page.type.value || m.type === page.type.value);
  if (!shown.length) {
    setChildren(page.list, infoBox(q ? "No memory matches these words." : "No memories yet. Add one above, or tell the assistant “remember that I prefer …”."));
    return;
  }
  setChildren(page.list, h("ul.mem-items", shown.map((m) => h("li", card(page, m)))));
}

function card(page, m) {
  const review = m.review ? h("span.mem-stars", { title: m.review.comment || "" }, `${"★".repeat(m.review.stars)}${"☆".repeat(5 - m.review.stars)} by ${m.review.agent}`) : null;
  const body = h("p.mem-text", m.content);
  const el = h(`article.mem-card${m.enabled ? "" : ".off"}`, { dataset: { id: m.id } },
    h("div.mem-head", h("span.badge", TYPES[m.type] || m.type), m.scopes.map((s) => h("span.badge.scope", s)), m.enabled ? null : h("span.badge.offline", "off")),
    body,
    h("p.mem-meta", `${m.source.replace("_", " ")} · used ${m.access_count}× · v${m.version} · ${fmtTime(m.updated)} · id ${m.id} `, review),
    h("div.card-actions",
      h("button", { type: "button", onclick: () => edit(page, el, m) }, "Edit"),
      h("button", { type: "button", onclick: () => toggle(page, m) }, m.enabled ? "Disable" : "Enable"),
      h("button.danger", { type: "button", onclick: () => remove(page, m) }, "Delete")));
  return el;
}

function edit(page, el, m) {
  const text = h("textarea", { rows: 3, maxlength: 2000, "aria-label": "Memory text" });
  text.value = m.content;
  const scopes = h("input", { type: "text", value: m.scopes.join(", "), "aria-label": "Scopes" });
  const form = h("form.mem-edit", { onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api(`/memory/${encodeURIComponent(m.id)}`, { method: "PATCH", body: { content: text.value, scopes: splitScopes(scopes.value) } });
      toast("Saved as a new version.");
      refresh(page);
    } catch (err) {
      toastError(err, "Not saved: ");
    }
  } }, text, h("div.mem-row", scopes, h("button.primary", { type: "submit" }, "Save"), h("button", { type: "button", onclick: () => showList(page) }, "Cancel")));
  el.querySelector(".mem-text").replaceWith(form);
  text.focus();
}

async function toggle(page, m) {
  try {
    await api(`/memory/${encodeURIComponent(m.id)}`, { method: "PATCH", body: { enabled: !m.enabled } });
    refresh(page);
  } catch (err) {
    toastError(err);
  }
}

async function remove(page, m) {
  if (!confirm(`Delete this memory for good?\n\n${m.content}`)) return;
  try {
    await api(`/memory/${encodeURIComponent(m.id)}`, { method: "DELETE" });
    toast("Deleted.");
    refresh(page);
  } catch (err) {
    toastError(err);
  }
}
