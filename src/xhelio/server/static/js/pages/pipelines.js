// The Pipelines page. Saved pipelines (search, families, step table, DAG, code of compute
// steps, replay) need the pipelines feature on the server; until the server lists pipeline
// routes in /status, the page says plainly that they are not available yet and shows the
// recorded operations of this tab's session, which is what pipelines will be built from.

import { api, sessionPath } from "../api.js";
import { implemented, loadStatus, state } from "../state.js";
import { errorBox, fmtNumber, fmtTime, h, infoBox, loading, setChildren } from "../ui.js";

export function mount(root) {
  const body = h("div.pipelines-body", loading());
  setChildren(root, h("div.pipelines", h("div.page-head", h("h1", "Pipelines")), body));
  show(body);
}

function shortJson(value) {
  const text = JSON.stringify(value);
  return text.length > 220 ? `${text.slice(0, 219)}…` : text;
}

async function show(body) {
  const status = state.status || (await loadStatus());
  if (status && implemented("/pipelines")) {
    setChildren(body, infoBox("The server offers pipeline routes, but this version of the web app does not show them yet."));
    return;
  }
  const parts = [
    infoBox("Pipelines are not available yet: this xhelio server has no saved-pipeline feature, so there is nothing to search, draw or replay here. The steps your session ran are listed below.", "warn"),
  ];
  const sid = state.sessionId;
  if (!sid) {
    parts.push(h("p.muted", "This tab has no session yet."));
    setChildren(body, parts);
    return;
  }
  const box = h("div", loading());
  parts.push(h("h2", "Operations of this session"), box);
  setChildren(body, parts);
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
