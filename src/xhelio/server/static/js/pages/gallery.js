// The Gallery page: every figure this tab's session produced, with the request that made
// it and the citations of the data it shows; open one large, export PNG/PDF/HTML.

import { api, download, sessionPath } from "../api.js";
import { drawFigure, purgeFigure, downloadPng } from "../plot.js";
import { onChange, state } from "../state.js";
import { errorBox, fmtTime, h, loading, setChildren, toast, toastError } from "../ui.js";
import { citation } from "./data.js";

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
    setChildren(root, h("div.gallery", h("div.page-head", h("h1", "Gallery"), h("span.muted", "Figures of this session, newest first.")), this.viewer, this.grid));
  }

  async load() {
    this.close();
    const sid = state.sessionId;
    if (!sid) {
      setChildren(this.grid, h("p.muted", "This tab has no session. Open one in the sidebar or ask for a plot in Chat."));
      return;
    }
    setChildren(this.grid, loading());
    try {
      const [{ figures }, { entries }] = await Promise.all([api(`${sessionPath(sid)}/gallery`), api(`${sessionPath(sid)}/entries`).catch(() => ({ entries: [] }))]);
      this.entries = entries;
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
    return h(
      "article.card",
      h("div.card-title", `Figure ${f.id}`),
      h("p.card-request", f.request ? `“${f.request}”` : "(no request recorded)"),
      h("p.muted", `${fmtTime(f.created)} · ${f.traces} trace${f.traces === 1 ? "" : "s"}`),
      h("div.card-actions", h("button.primary.small", { onclick: () => this.open(sid, f.id) }, "Open"), ...this.exportButtons(sid, f.id)),
    );
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
      const cited = (this.entries || []).filter((e) => used.has(e.label) || [...used].some((n) => String(n).includes(e.parameter || "\0")));
      const datasets = [...new Map((cited.length ? cited : this.entries || []).map((e) => [e.dataset || e.label, e])).values()];
      setChildren(
        this.viewer,
        h("div.viewer-head", h("h2", `Figure ${item.id}`), h("span.spacer"), ...this.exportButtons(sid, item.id, plot), h("button.small", { onclick: () => this.close(), "aria-label": "Close figure" }, "Close")),
        h("p.card-request", item.request ? `Request: “${item.request}”` : ""),
        plot,
        // When the traces do not name their data, say the list is the session's data.
        h("details.citations", { open: true }, h("summary", cited.length ? "Data citations" : "Data citations (all data of this session)"), datasets.length ? h("ul", datasets.map((e) => h("li", citation(e)))) : h("p.muted", "No data entries recorded for this figure.")),
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
