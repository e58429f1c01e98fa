// The Gallery page: every figure this tab's session produced, with the request that made
// it, the steps that made it (its pipeline, traced back from the figure's data labels
// through the operations log) and the citations of the data it shows; open one large,
// export PNG/PDF/HTML.

import { api, download, sessionPath } from "../api.js";
import { drawFigure, purgeFigure, downloadPng, ensurePlotly } from "../plot.js";
import { onChange, state } from "../state.js";
import { errorBox, fmtTime, h, loading, setChildren, toast, toastError } from "../ui.js";
import { citation, citationLine, citationsOf } from "./data.js";

export function mount(root) {
  const page = new GalleryPage(root);
  const off = onChange((what) => what === "session" && page.load());
  page.load();
  return () => {
    off();
    page.close();
  };
}

class GalleryPage {
  constructor(root) {
    this.grid = h("div.gallery-grid", { id: "gallery" });
    this.viewer = h("section.viewer", { hidden: true, "aria-label": "Figure" });
    this.root = root;
    // Any session's figures can be browsed; the tab's own session is the default.
    this.picker = h("select", { id: "gallery-session", "aria-label": "Session whose figures are shown", onchange: () => this.load(this.picker.value) });
    setChildren(root, h("div.gallery", h("div.page-head", h("h1", "Gallery"), h("label.muted", { for: "gallery-session" }, "Figures of"), this.picker, h("span.muted", "newest first.")), this.viewer, this.grid));
  }

  async fillPicker(sid) {
    try {
      const { sessions } = await api("/sessions", { query: { limit: 100 } });
      const options = sessions.map((s) => h("option", { value: s.id, selected: s.id === sid }, `${s.title || s.id.slice(0, 9)}${s.id === state.sessionId ? " (this tab)" : ""}`));
      if (sid && !sessions.some((s) => s.id === sid)) options.unshift(h("option", { value: sid, selected: true }, "this tab's session"));
      if (!sid) options.unshift(h("option", { value: "", selected: true }, "choose a session"));
      setChildren(this.picker, options);
    } catch {
      setChildren(this.picker, h("option", { value: sid || "" }, sid ? "this tab's session" : "no session"));
    }
  }

  async load(chosen) {
    this.close();
    const sid = chosen || state.sessionId;
    this.fillPicker(sid);
    if (!sid) {
      setChildren(this.grid, h("p.muted", "This tab has no session. Choose one above, open one in the sidebar or ask for a plot in Chat."));
      return;
    }
    setChildren(this.grid, loading());
    try {
      const [{ figures }, { entries }, { operations }] = await Promise.all([
        api(`${sessionPath(sid)}/gallery`),
        api(`${sessionPath(sid)}/entries`).catch(() => ({ entries: [] })),
        api(`${sessionPath(sid)}/operations`).catch(() => ({ operations: [] })),
      ]);
      this.entries = entries;
      this.operations = operations;
      if (!figures.length) {
        setChildren(this.grid, h("p.muted", "No figures in this session yet. Ask for a plot in Chat."));
        return;
      }
      const sorted = [...figures].sort((a, b) => b.id - a.id);
      setChildren(this.grid, sorted.map((f) => this.card(sid, f)));
    } catch (err) {
      setChildren(this.grid, errorBox(err, "The gallery could not be loaded"));
    }
  }

  card(sid, f) {
    // Clickable picture; keyboard and screen-reader users have the card's Open button.
    const thumb = h("div.thumb", { onclick: () => this.open(sid, f.id), title: "Open" });
    this.thumbnail(sid, f.id, thumb);
    return h(
      "article.card",
      thumb,
      h("div.card-title", `Figure ${f.id}`),
      h("p.card-request", f.request ? `“${f.request}”` : "(no request recorded)"),
      h("p.muted", `${fmtTime(f.created)} · ${f.traces} trace${f.traces === 1 ? "" : "s"}`),
      h("div.card-actions", h("button.primary.small", { onclick: () => this.open(sid, f.id) }, "Open"), ...this.exportButtons(sid, f.id)),
    );
  }

  /** A small static picture of the figure (no title, legend or citation) as the card's face. */
  async thumbnail(sid, id, el) {
    try {
      const [item, Plotly] = await Promise.all([api(`${sessionPath(sid)}/gallery/${id}`), ensurePlotly()]);
      const figure = item.figure || {};
      const layout = { ...(figure.layout || {}), title: undefined, showlegend: false, annotations: [], width: 240, height: 130, margin: { l: 4, r: 4, t: 4, b: 4 }, autosize: false };
      for (const key of Object.keys(layout)) {
        if (/^[xy]axis\d*$/.test(key)) layout[key] = { ...layout[key], title: undefined, showticklabels: false };
        if (/^legend\d+$/.test(key)) delete layout[key];
      }
      const data = (figure.data || []).map((t) => ({ ...t, showscale: false, hoverinfo: "skip" }));
      const url = await Plotly.toImage({ data, layout }, { format: "png", width: 240, height: 130 });
      el.append(h("img", { src: url, alt: `Thumbnail of figure ${id}`, width: 240, height: 130 }));
    } catch {
      el.append(h("span.muted", "No preview"));
    }
  }

  exportButtons(sid, id, plotEl) {
    return ["png", "pdf", "html"].map((format) =>
      h("button.small", {
        onclick: async () => {
          try {
            // PNG of an open figure is drawn by the browser as shown (zoom included).
            if (format === "png" && plotEl) return await downloadPng(plotEl, `xhelio-figure-${id}`);
            const name = await download(`${sessionPath(sid)}/gallery/${id}/export`, { format }, `xhelio-figure-${id}.${format}`);
            toast(`Saved ${name}`);
          } catch (err) {
            toastError(err, `${format.toUpperCase()} export failed: `);
          }
        },
      }, format.toUpperCase()),
    );
  }

  async open(sid, id) {
    this.close();
    this.viewer.hidden = false;
    setChildren(this.viewer, loading("Loading figure…"));
    try {
      const item = await api(`${sessionPath(sid)}/gallery/${id}`);
      const plot = h("div.viewer-plot");
      const used = new Set((item.figure?.data || []).flatMap((t) => [t.name, t.data_label, t.meta?.label, t.meta?.data_label, t.legendgroup]).filter(Boolean));
      const steps = lineage(this.operations || [], used, item.created);
      const made = new Set(steps.flatMap(produced));
      const cited = (this.entries || []).filter((e) => made.has(e.label) || used.has(e.label) || [...used].some((n) => String(n).includes(e.parameter || "\0")));
      // Every dataset behind the figure, computed data citing its inputs, each once.
      const lines = [...new Set((cited.length ? cited : this.entries || []).flatMap((e) => (citationsOf(e).length ? citationsOf(e).map(citationLine) : [citation(e)])))];
      setChildren(
        this.viewer,
        h("div.viewer-head", h("h2", `Figure ${item.id}`), h("span.spacer"), ...this.exportButtons(sid, item.id, plot), h("button.small", { onclick: () => this.close(), "aria-label": "Close figure" }, "Close")),
        h("p.card-request", item.request ? `Request: “${item.request}”` : ""),
        plot,
        h("details.made-by", { open: true },
          h("summary", "How it was made"),
          steps.length
            ? h("ol.made-steps", steps.map((op) => h("li", h("code", op.tool), " ", h("span.muted", stepText(op)))))
            : h("p.muted", "The steps of this figure are not in the session's operations log."),
          h("p.muted.small", "To replay it for another time range, say “save this as a pipeline called NAME” in Chat, then use the Pipelines page.")),
        // When the traces do not name their data, say the list is the session's data.
        h("details.citations", { open: true }, h("summary", cited.length ? "Data citations" : "Data citations (all data of this session)"), lines.length ? h("ul", lines.map((line) => h("li", line))) : h("p.muted", "No data entries recorded for this figure.")),
      );
      await drawFigure(plot, item.figure, { revision: `gallery-${item.id}` });
      plot.focus?.();
    } catch (err) {
      setChildren(this.viewer, errorBox(err, "The figure could not be opened"));
    }
  }

  close() {
    const plot = this.viewer.querySelector(".viewer-plot");
    if (plot) purgeFigure(plot);
    this.viewer.hidden = true;
    this.viewer.replaceChildren();
  }
}

/** The data labels an operation made, as the funnel recorded them from the tool's spec. */
export function produced(op) {
  return (op.produced || []).map(String);
}

/** The data labels an operation's arguments name (its inputs). */
function sources(op) {
  return (op.read || []).map(String);
}

/** A call that draws or edits the figure. */
function draws(op) {
  return op.phase === "render";
}

function when(value) {
  if (typeof value === "number") return value < 1e12 ? value * 1000 : value;
  const ms = Date.parse(value || "");
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * The successful operations that made a figure, in the order they ran: its last render,
 * and for each data label it shows (from the render call's arguments), the latest operation before it that produced the
 * label, then that operation's own sources, and so on back to the fetches.
 */
export function lineage(operations, labels, created) {
  const limit = when(created) + 1000; // the record is written just after the render
  const before = operations.filter((op) => op.status === "ok" && when(op.started) <= limit);
  const newestFirst = [...before].reverse();
  const chosen = new Set();
  const render = newestFirst.find(draws);
  if (render) chosen.add(render);
  // Rendered traces carry display names; the render call's own spec names the data.
  const specLabels = (render?.args?.figure?.data || []).map((tr) => tr?.data_label).filter(Boolean);
  const queue = [...specLabels, ...labels].map(String);
  const seen = new Set();
  while (queue.length) {
    const label = queue.shift();
    if (seen.has(label)) continue;
    seen.add(label);
    const maker = newestFirst.find((op) => op !== render && produced(op).includes(label));
    if (!maker) continue;
    chosen.add(maker);
    queue.push(...sources(maker));
  }
  return before.filter((op) => chosen.has(op));
}

function stepText(op) {
  const a = op.args || {};
  const made = produced(op);
  if (op.phase === "fetch") return `${made.join(", ")} · ${a.time_range || ""}`;
  if (op.phase === "compute" && made.length) return `${sources(op).join(", ")} → ${made.join(", ")}${a.description ? ` (${a.description})` : ""}`;
  if (draws(op) && !op.edits_figure) return `${(a.figure?.data || []).length} trace(s)`;
  return "";
}
