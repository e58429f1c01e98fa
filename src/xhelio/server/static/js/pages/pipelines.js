// The Pipelines page: saved pipelines with search and families, one pipeline's step table,
// its DAG drawn as SVG, the code of its compute steps, export as script/notebook, and
// replay with a new time range (a new session, followed live on the Chat page). A server
// without the pipelines feature answers 404 on /pipelines; the page then says so and lists
// the operations of this tab's session, which is what pipelines are made from.

import { api, download, sessionPath } from "../api.js";
import { sessionsChanged, setSession, state } from "../state.js";
import { errorBox, fmtNumber, fmtTime, h, infoBox, loading, setChildren, toast, toastError } from "../ui.js";

const SVG = "http://www.w3.org/2000/svg";

export function mount(root, params) {
  const list = h("div.pl-list", { id: "pipeline-list", "aria-label": "Saved pipelines" }, loading());
  const detail = h("div.pl-detail", { id: "pipeline-detail" }, h("p.muted", "Choose a pipeline to see its steps, DAG and code, and to replay it."));
  const query = h("input", { id: "pipeline-search", type: "search", placeholder: "Search: name, dataset, intent…", "aria-label": "Search pipelines" });
  const mission = h("input", { id: "pipeline-mission", type: "search", placeholder: "Mission, e.g. ACE", "aria-label": "Mission filter", size: 14 });
  const page = { list, detail, query, mission, selected: (params?.rest || [])[0] || null };
  const form = h(
    "form.pl-search",
    { onsubmit: (e) => { e.preventDefault(); showList(page); } },
    query, mission, h("button", { type: "submit" }, "Search"),
  );
  setChildren(root, h("div.pipelines",
    h("div.page-head", h("h1", "Pipelines"), h("span.muted", "Saved analyses you can inspect and replay without a model.")),
    h("div.pl-body", h("div.pl-left", form, list), detail)));
  showList(page);
  if (page.selected) showDetail(page, page.selected);
}

async function showList(page) {
  setChildren(page.list, loading());
  let answer;
  try {
    answer = await api("/pipelines", { query: { q: page.query.value.trim(), mission: page.mission.value.trim() } });
  } catch (err) {
    if (err.status === 404 && err.type !== "NotFound") return showUnavailable(page);
    setChildren(page.list, errorBox(err, "Pipelines could not be listed"));
    return;
  }
  const searched = Boolean(answer.query || answer.mission);
  if (!answer.families.length) {
    setChildren(page.list, infoBox(searched
      ? "No saved pipeline matches. Search covers names, descriptions, step intents, datasets and missions of pipelines with at least 3 fetches or a computation."
      : "No saved pipelines yet. After an analysis in Chat, say “save this as a pipeline called NAME”."));
    return;
  }
  setChildren(page.list, h("ul.pl-families", answer.families.map((family) => h("li.pl-family", { dataset: { family: family.family_id } },
    h("div.pl-family-head", h("strong", family.name), family.variants.length > 1 ? h("span.badge", `${family.variants.length} variants`) : null),
    h("ul.pl-variants", family.variants.map((v) => h("li",
      h("button.pl-variant", {
        type: "button",
        dataset: { id: v.id },
        "aria-current": v.id === page.selected ? "true" : null,
        onclick: () => selectPipeline(page, v.id),
      },
      h("span.pl-name", v.name),
      h("span.pl-meta", `${v.steps} steps · ${v.datasets.join(", ") || "no dataset"} · ${fmtTime(v.created)}`),
      ))))))));
}

function selectPipeline(page, id) {
  page.selected = id;
  history.replaceState(null, "", `/pipelines/${encodeURIComponent(id)}`);
  for (const b of page.list.querySelectorAll(".pl-variant")) {
    if (b.dataset.id === id) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  showDetail(page, id);
}

async function showDetail(page, id) {
  setChildren(page.detail, loading());
  let info;
  try {
    info = await api(`/pipelines/${encodeURIComponent(id)}`);
  } catch (err) {
    setChildren(page.detail, errorBox(err, "This pipeline could not be loaded"));
    return;
  }
  if (page.selected !== id) return;
  const p = info.pipeline;
  const rangeInput = h("input", { id: "replay-range", value: info.time_range, placeholder: "e.g. 2024-01-20, last 3 days, March 2001", "aria-label": "Time range for the replay" });
  const runMessage = h("div.pl-run-message", { "aria-live": "polite" });
  const replay = h(
    "form.pl-replay",
    { onsubmit: (e) => { e.preventDefault(); runReplay(p, rangeInput.value.trim(), runMessage, e.submitter); } },
    h("label", { for: "replay-range" }, "Time range"), rangeInput,
    h("button.primary", { type: "submit", id: "replay" }, "Replay"),
  );
  if (!("$TIME_RANGE" in (p.variables || {}))) {
    rangeInput.disabled = true;
    rangeInput.value = "";
    rangeInput.placeholder = "this pipeline has no time range variable";
  }
  const exportButton = (fmt, label) => h("button.small", {
    type: "button",
    onclick: async () => {
      try {
        toast(`Saved ${await download(`/pipelines/${encodeURIComponent(p.id)}/export`, { format: fmt }, `${p.id}.${fmt}`)}`);
      } catch (err) {
        toastError(err, "Export failed: ");
      }
    },
  }, label);
  const remove = h("button.small.danger", {
    type: "button",
    onclick: async () => {
      if (!confirm(`Delete the pipeline “${p.name}”?`)) return;
      try {
        await api(`/pipelines/${encodeURIComponent(p.id)}`, { method: "DELETE" });
        toast(`Deleted ${p.name}`);
        page.selected = null;
        history.replaceState(null, "", "/pipelines");
        setChildren(page.detail, h("p.muted", "Deleted."));
        showList(page);
      } catch (err) {
        toastError(err, "Delete failed: ");
      }
    },
  }, "Delete");
  const family = info.family.length > 1
    ? h("p.pl-family-line", "Family (same data logic): ", info.family.map((v) => v.id === p.id
      ? h("strong", `${v.name} `)
      : h("button.link", { type: "button", onclick: () => selectPipeline(page, v.id) }, `${v.name} `)))
    : null;
  setChildren(page.detail,
    h("div.pl-title",
      h("h2", p.name),
      h("span.panel-actions", exportButton("py", "Python script"), exportButton("ipynb", "Notebook"), remove)),
    p.description ? h("p.pl-description", p.description) : null,
    h("p.muted.pl-facts", `${p.id} · created ${fmtTime(p.created_at)}`, p.source_session ? ` · from session ${p.source_session.slice(0, 9)}…` : "", info.row.indexed ? "" : " · not in search (fewer than 3 fetches and no computation)"),
    family,
    replay,
    runMessage,
    h("h3", "DAG"),
    h("div.dag-box", dagSvg(p.steps, info.edges)),
    h("p.dag-legend", h("span.key.appropriation"), "data (fetch, compute)", h("span.key.presentation"), "presentation (plot, export)"),
    h("h3", "Steps"),
    stepTable(p.steps),
    info.code.length ? [h("h3", "Code of the compute steps"), info.code.map((c) => h("figure.code",
      h("figcaption", h("code", c.step_id), ` ${c.tool}`),
      h("pre", h("code", c.code))))] : null,
  );
  fitDagLabels(page.detail);
}

async function runReplay(p, range, message, button) {
  if (button) button.disabled = true;
  setChildren(message, loading(`Starting ${p.name}…`));
  try {
    const r = await api(`/pipelines/${encodeURIComponent(p.id)}/run`, { method: "POST", body: { time_range: range } });
    setSession(r.session_id);
    sessionsChanged();
    // The chat page sees the session busy and follows the run's events live.
    window.xhelioNavigate(`/chat/${r.session_id}?after=${r.after_event_id}`);
  } catch (err) {
    setChildren(message, errorBox(err, "The replay did not start"));
  } finally {
    if (button) button.disabled = false;
  }
}

function shortJson(value) {
  const text = JSON.stringify(value);
  return text.length > 140 ? `${text.slice(0, 139)}…` : text;
}

function stepTable(steps) {
  return h("div.table-scroll", h("table.grid", { id: "pipeline-steps" },
    h("thead", h("tr", ["step", "tool", "intent", "arguments", "needs → makes"].map((c) => h("th", c)))),
    h("tbody", steps.map((s) => h(`tr.${s.phase}`, { dataset: { step: s.step_id } },
      h("td", h("code", s.step_id)),
      h("td", h("code", s.tool), s.critical ? null : h("span.badge", "optional")),
      h("td.intent", s.intent || ""),
      h("td.args", { title: JSON.stringify(s.args) }, h("code", shortJson(s.args))),
      h("td.io", (s.depends_on || []).join(", ") || "—", " → ", (s.produces || []).join(", ") || "—"))))));
}

/** Layers by longest path from a root; edges as curves; nodes coloured by phase. */
// Shorten node labels that overflow their box, measured once the DAG is on the page
// (a detached SVG has no text metrics; fonts differ from machine to machine).
function fitDagLabels(root) {
  for (const t of root.querySelectorAll(".dag text[data-room]")) {
    const room = Number(t.dataset.room);
    let text = t.textContent;
    while (text.length > 2 && t.getComputedTextLength() > room) {
      text = text.replace(/…$/, "").slice(0, -1);
      t.textContent = `${text}…`;
    }
  }
}

function dagSvg(steps, edges) {
  const depth = new Map();
  const parents = new Map(steps.map((s) => [s.step_id, []]));
  for (const [a, b] of edges) parents.get(b)?.push(a);
  const depthOf = (id, seen = new Set()) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id)) return 0; // a cycle would be a broken file: draw it flat, do not hang
    seen.add(id);
    const d = Math.max(-1, ...parents.get(id).map((p) => depthOf(p, seen))) + 1;
    depth.set(id, d);
    return d;
  };
  for (const s of steps) depthOf(s.step_id);
  // A root sits just before its first consumer, so a fetch feeding only the plot is drawn
  // next to the computation instead of sending a long edge across it.
  for (const s of steps) {
    if (parents.get(s.step_id).length) continue;
    const kids = edges.filter(([a]) => a === s.step_id).map(([, b]) => depth.get(b));
    if (kids.length) depth.set(s.step_id, Math.max(0, Math.min(...kids) - 1));
  }
  const layers = [];
  for (const s of steps) (layers[depth.get(s.step_id)] ||= []).push(s);
  const W = 180, H = 46, GX = 40, GY = 18;
  const pos = new Map();
  layers.forEach((layer, i) => layer.forEach((s, j) => pos.set(s.step_id, { x: 8 + i * (W + GX), y: 8 + j * (H + GY) })));
  const width = 16 + layers.length * (W + GX) - GX;
  const height = 16 + Math.max(1, ...layers.map((l) => l.length)) * (H + GY) - GY;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("class", "dag");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Pipeline DAG: ${steps.length} steps, ${edges.length} dependencies`);
  const el = (name, attrs, text) => {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  const marker = document.createElementNS(SVG, "defs");
  marker.innerHTML = '<marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#8a96a6"/></marker>';
  svg.append(marker);
  for (const [a, b] of edges) {
    const p = pos.get(a), q = pos.get(b);
    if (!p || !q) continue;
    const x1 = p.x + W, y1 = p.y + H / 2, x2 = q.x, y2 = q.y + H / 2, mx = (x1 + x2) / 2;
    el("path", { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, class: "dag-edge", "marker-end": "url(#arrow)" });
  }
  for (const s of steps) {
    const { x, y } = pos.get(s.step_id);
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", `dag-node ${s.phase}`);
    g.dataset.step = s.step_id;
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${s.step_id} ${s.tool}${s.intent ? `: ${s.intent}` : ""}`;
    g.append(title);
    svg.append(g);
    const rect = document.createElementNS(SVG, "rect");
    for (const [k, v] of Object.entries({ x, y, width: W, height: H, rx: 6 })) rect.setAttribute(k, String(v));
    g.append(rect);
    const label = (text, dy, cls, max = 30) => {
      const t = document.createElementNS(SVG, "text");
      t.setAttribute("x", String(x + 8));
      t.setAttribute("y", String(y + dy));
      t.setAttribute("class", cls);
      t.textContent = text.length > max ? `${text.slice(0, max - 1)}…` : text;
      t.dataset.room = String(W - 16); // fitDagLabels shortens what still overflows the box
      g.append(t);
    };
    label(`${s.step_id} · ${s.tool}`, 18, "dag-tool", 25);
    label(s.produces?.[0] || s.intent || "", 36, "dag-sub");
  }
  return svg;
}

// A server without saved pipelines: say so and show what pipelines would be made from.
async function showUnavailable(page) {
  const parts = [
    infoBox("Pipelines are not available: this xhelio server has no saved-pipeline feature, so there is nothing to search, draw or replay here. The steps your session ran are listed below.", "warn"),
  ];
  page.detail.hidden = true;
  const sid = state.sessionId;
  if (!sid) {
    setChildren(page.list, parts, h("p.muted", "This tab has no session yet."));
    return;
  }
  const box = h("div", loading());
  setChildren(page.list, parts, h("h2", "Operations of this session"), box);
  try {
    const { operations } = await api(`${sessionPath(sid)}/operations`);
    if (!operations.length) {
      setChildren(box, h("p.muted", "No operations recorded in this session yet."));
      return;
    }
    setChildren(box, h("div.table-scroll", h("table.grid", { id: "operations" },
      h("thead", h("tr", ["#", "tool", "arguments", "status", "by", "started", "ms"].map((c) => h("th", c)))),
      h("tbody", operations.map((op) => h("tr",
        h("td.num", op.seq),
        h("td", h("code", op.tool)),
        h("td.args", { title: JSON.stringify(op.args) }, h("code", shortJson(op.args))),
        h(`td.status-${op.status}`, op.status),
        h("td", op.caller || ""),
        h("td", fmtTime(op.started)),
        h("td.num", op.duration_ms == null ? "" : fmtNumber(Math.round(op.duration_ms))),
      ))))));
  } catch (err) {
    setChildren(box, errorBox(err, "Operations could not be loaded"));
  }
}
