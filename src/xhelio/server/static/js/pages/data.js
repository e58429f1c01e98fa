// The Data page: catalog browser (mission -> dataset -> parameter with coverage, cadence,
// units, description), time range in the CLI's grammar (validated by the server), fetch
// into this tab's session with progress, then per entry: head/tail preview, describe
// statistics and export to CSV/Parquet/netCDF with the citation of the data.

import { api, download, sessionPath } from "../api.js";
import { liveRun } from "../sse.js";
import { ensureSession, onChange, sessionsChanged, state } from "../state.js";
import { errorBox, fmtDuration, fmtNumber, fmtTime, h, loading, setChildren, table, toast, toastError } from "../ui.js";

export function mount(root) {
  const page = new DataPage(root);
  // While a fetch creates the tab's session, the fetch itself reloads the list after.
  const off = onChange((what) => what === "session" && !page.fetching && page.loadEntries());
  return () => {
    off();
    page.controller?.abort();
  };
}

/** A filterable, keyboard-navigable list column. */
function listColumn(title, id) {
  const filter = h("input.filter", { type: "search", placeholder: `Filter ${title.toLowerCase()}…`, "aria-label": `Filter ${title.toLowerCase()}` });
  const list = h("ul.pick-list", { id, role: "listbox", "aria-label": title, tabindex: 0 });
  const count = h("span.muted.count");
  const el = h("section.column", h("div.column-head", h("h2", title), count), filter, list);
  filter.addEventListener("input", () => {
    const q = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const li of list.children) {
      const hit = !q || li.textContent.toLowerCase().includes(q);
      li.hidden = !hit;
      shown += hit;
    }
    count.textContent = list.children.length ? `${shown}` : "";
  });
  list.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const items = [...list.children].filter((li) => !li.hidden);
    const at = items.findIndex((li) => li.getAttribute("aria-selected") === "true");
    const next = items[Math.max(0, Math.min(items.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)))];
    next?.click();
    next?.scrollIntoView({ block: "nearest" });
  });
  return { el, list, filter, count };
}

function select(list, li) {
  for (const other of list.children) other.setAttribute("aria-selected", "false");
  li.setAttribute("aria-selected", "true");
}

class DataPage {
  constructor(root) {
    this.dataset = null;
    this.parameter = null;
    this.controller = null;
    this.selectedLabel = null;

    this.missions = listColumn("Missions", "missions");
    this.datasets = listColumn("Datasets", "datasets");
    this.datasets.list.append(h("li.hint.muted", "Pick a mission."));
    this.detail = h("section.column.detail", { "aria-label": "Dataset" }, h("p.muted", "Pick a mission, then a dataset."));
    this.search = h("input", { type: "search", id: "catalog-search", placeholder: "Search the catalog: e.g. ACE magnetic field, OMNI Dst…", "aria-label": "Search the catalog" });
    this.searchResults = h("div.search-results", { hidden: true });
    this.search.addEventListener("keydown", (e) => e.key === "Enter" && this.runSearch());
    this.timeRangeEdited = false;

    this.timeRange = h("input", { id: "time-range", value: "2024-01-15", placeholder: "2024-01-15, 2024-01-15T06:00 to 2024-01-16, last 3 days, 2024-03…", "aria-label": "Time range" });
    this.timeRange.addEventListener("input", () => (this.timeRangeEdited = true));
    this.fetchButton = h("button.primary", { id: "fetch", type: "submit" }, "Fetch into session");
    // Where the data comes from: the server's registered sources (HAPI, CDF files, plugins).
    this.source = h("select", { id: "fetch-source", "aria-label": "Data source", title: "Data source" }, h("option", { value: "" }, "default source"));
    this.fetchTarget = h("span.fetch-target", "No parameter selected");
    this.progress = h("div.progress", { hidden: true }, h("div.bar", h("span")), h("span.progress-text", { role: "status" }));
    this.fetchMessage = h("div.fetch-message");
    const fetchForm = h(
      "form.fetch-bar",
      { onsubmit: (e) => { e.preventDefault(); this.fetch(); } },
      h("label", { for: "time-range" }, "Time range"),
      this.timeRange,
      h("label", { for: "fetch-source" }, "Source"),
      this.source,
      this.fetchTarget,
      this.fetchButton,
    );

    this.entries = h("div.entries", { id: "entries" });
    this.entryView = h("div.entry-view", { id: "entry-view" }, h("p.muted", "Fetched data appears here: preview, statistics and export."));

    setChildren(
      root,
      h(
        "div.data",
        h("div.search-bar", this.search, h("button", { onclick: () => this.runSearch() }, "Search")),
        this.searchResults,
        h("div.browser", this.missions.el, this.datasets.el, this.detail),
        fetchForm,
        this.progress,
        this.fetchMessage,
        h("div.session-data", h("section.column", h("div.column-head", h("h2", "In this session")), this.entries), this.entryView),
      ),
    );
    this.loadMissions();
    this.loadEntries();
    this.loadSources();
  }

  async loadSources() {
    try {
      const { sources, default: preferred } = await api("/catalog/sources");
      const options = sources.map((s) =>
        h("option", { value: s.name, disabled: !s.usable, title: s.problem || "" }, s.name === preferred ? `${s.name} (default)` : s.name),
      );
      setChildren(this.source, ...options);
      this.source.value = preferred;
    } catch {
      // An older server without the list: the fetch uses the server's default source.
    }
  }

  // Catalog ------------------------------------------------------------------------------

  async loadMissions() {
    setChildren(this.missions.list, loading());
    try {
      const { missions } = await api("/catalog/missions");
      setChildren(this.missions.list, missions.map((m) => {
        const li = h("li", { role: "option", "aria-selected": "false", title: (m.aliases || []).join(", "), onclick: () => { select(this.missions.list, li); this.loadDatasets(m.id); } }, h("span", m.name || m.id), h("span.muted", ` ${m.datasets}`));
        return li;
      }));
      this.missions.count.textContent = `${missions.length}`;
    } catch (err) {
      setChildren(this.missions.list, errorBox(err, "Missions could not be loaded"));
    }
  }

  async loadDatasets(mission, pick) {
    setChildren(this.datasets.list, loading());
    this.datasets.filter.value = "";
    try {
      const { datasets } = await api(`/catalog/missions/${encodeURIComponent(mission)}/datasets`);
      setChildren(this.datasets.list, datasets.map((d) => {
        const li = h("li", { role: "option", "aria-selected": "false", dataset: { id: d.id }, title: d.title, onclick: () => { select(this.datasets.list, li); this.loadDataset(d.id); } }, h("code", d.id), h("span.sub", d.title || ""));
        return li;
      }));
      this.datasets.count.textContent = `${datasets.length}`;
      if (pick) this.datasets.list.querySelector(`li[data-id="${CSS.escape(pick)}"]`)?.click();
    } catch (err) {
      setChildren(this.datasets.list, errorBox(err, "Datasets could not be loaded"));
    }
  }

  async loadDataset(id, parameter) {
    setChildren(this.detail, loading());
    try {
      const d = await api(`/catalog/datasets/${encodeURIComponent(id)}`);
      this.dataset = d;
      this.parameter = null;
      const rows = (d.parameters || []).filter((p) => p.name.toLowerCase() !== "time");
      const tbody = h("tbody", rows.map((p) => {
        const radio = h("input", { type: "radio", name: "parameter", value: p.name, "aria-label": p.name, onchange: () => this.pickParameter(p.name) });
        return h("tr", { onclick: (e) => { if (e.target !== radio) { radio.checked = true; this.pickParameter(p.name); } } }, h("td", radio), h("td", h("code", p.name)), h("td", p.units || "—"), h("td.num", p.size ? p.size.join("×") : "1"), h("td.desc", p.description || ""));
      }));
      setChildren(
        this.detail,
        h("h2", h("code", d.id)),
        h("p.ds-title", d.title || ""),
        h("dl.facts", h("dt", "Coverage"), h("dd", `${fmtTime(d.start) || "?"} – ${fmtTime(d.stop) || "?"}`), h("dt", "Cadence"), h("dd", d.cadence ? fmtDuration(d.cadence) : "unknown"), h("dt", "Instrument"), h("dd", d.instrument || "—")),
        h("div.param-scroll", h("table.grid.params", h("thead", h("tr", h("th", h("span.sr-only", "Pick")), h("th", "Parameter"), h("th", "Units"), h("th", "Size"), h("th", "Description"))), tbody)),
      );
      if (d.stop && !this.timeRangeEdited) this.timeRange.value = String(d.stop).slice(0, 10);
      const first = parameter || rows[0]?.name;
      if (first) {
        const radio = this.detail.querySelector(`input[value="${CSS.escape(first)}"]`);
        if (radio) radio.checked = true;
        this.pickParameter(first);
      }
    } catch (err) {
      setChildren(this.detail, errorBox(err, "The dataset could not be loaded"));
    }
  }

  pickParameter(name) {
    this.parameter = name;
    setChildren(this.fetchTarget, h("code", `${this.dataset.id}.${name}`));
  }

  async runSearch() {
    const q = this.search.value.trim();
    if (!q) {
      this.searchResults.hidden = true;
      return;
    }
    this.searchResults.hidden = false;
    setChildren(this.searchResults, loading("Searching…"));
    try {
      const { results } = await api("/catalog/search", { query: { q, limit: 20 } });
      setChildren(
        this.searchResults,
        h("div.column-head", h("h2", `Results for “${q}”`), h("button.icon", { "aria-label": "Close results", onclick: () => (this.searchResults.hidden = true) }, "×")),
        results.length
          ? h("ul.result-list", results.map((r) => h("li", h("button.link", { onclick: () => this.openResult(r) }, h("code", r.dataset_id), " ", r.title), h("span.muted", ` ${r.mission || ""} · ${(r.parameters || []).slice(0, 6).join(", ")}`))))
          : h("p.muted", "No dataset matches. Try a mission or instrument name."),
      );
    } catch (err) {
      setChildren(this.searchResults, errorBox(err, "Search failed"));
    }
  }

  async openResult(r) {
    this.searchResults.hidden = true;
    if (r.mission) {
      const li = [...this.missions.list.children].find((el) => el.textContent.toLowerCase().startsWith(String(r.mission).toLowerCase()));
      if (li) select(this.missions.list, li);
      this.loadDatasets(r.mission, r.dataset_id);
    } else {
      this.loadDataset(r.dataset_id);
    }
  }

  // Fetch --------------------------------------------------------------------------------

  setProgress(text, fraction) {
    this.progress.hidden = false;
    this.progress.querySelector(".progress-text").textContent = text;
    const bar = this.progress.querySelector(".bar");
    bar.classList.toggle("indeterminate", fraction == null);
    bar.firstElementChild.style.width = fraction == null ? "" : `${Math.round(fraction * 100)}%`;
  }

  async fetch() {
    if (!this.dataset || !this.parameter) {
      setChildren(this.fetchMessage, errorBox({ message: "Pick a dataset and a parameter first." }, "Nothing to fetch"));
      return;
    }
    const body = { dataset_id: this.dataset.id, parameter_id: this.parameter, time_range: this.timeRange.value.trim(), source: this.source.value || null };
    this.fetchMessage.replaceChildren();
    this.fetchButton.disabled = true;
    this.fetching = true;
    this.setProgress(`Fetching ${body.dataset_id}.${body.parameter_id}…`, null);
    this.controller = new AbortController();
    let result = null;
    let failure = null;
    try {
      const sid = await ensureSession(`Data: ${body.dataset_id}.${body.parameter_id}`);
      await liveRun({
        url: `/api/v1${sessionPath(sid)}/fetch/stream`,
        method: "POST",
        body,
        sessionId: () => sid,
        signal: this.controller.signal,
        onConnection: (s, detail) => s === "reconnecting" && this.setProgress(`Connection dropped, reconnecting (${detail})…`, null),
        onEvent: (event) => {
          const d = event.data || {};
          if (event.type === "progress") this.setProgress(d.summary || "Downloading…", progressFraction(d.data));
          else if (event.type === "error" || event.type === "tool_error") failure = d;
          else if (event.type === "done") result = d.result || null;
        },
      });
    } catch (err) {
      if (err.name !== "AbortError") failure = err;
    }
    this.fetchButton.disabled = false;
    this.fetching = false;
    this.progress.hidden = true;
    if (result && result.status !== "error") {
      const label = result.label || result.labels?.[0];
      setChildren(this.fetchMessage, h("div.message.ok", { role: "status" }, `Fetched ${label}: ${fmtNumber(result.points)} points.`));
      sessionsChanged();
      await this.loadEntries(label);
    } else {
      setChildren(this.fetchMessage, errorBox(failure || result || { message: "The fetch ended without a result." }, "The fetch failed"));
      this.loadEntries();
    }
  }

  // Session data -------------------------------------------------------------------------

  async loadEntries(select) {
    const sid = state.sessionId;
    if (!sid) {
      setChildren(this.entries, h("p.muted", "This tab has no session yet: a fetch starts one."));
      return;
    }
    try {
      const { entries } = await api(`${sessionPath(sid)}/entries`);
      this.entryList = entries;
      if (!entries.length) {
        setChildren(this.entries, h("p.muted", "No data in this session yet."));
        return;
      }
      setChildren(this.entries, h("ul.pick-list.entry-list", { role: "listbox", "aria-label": "Session data" }, entries.map((e) => {
        const li = h("li", { role: "option", tabindex: 0, "aria-selected": String(e.label === this.selectedLabel), dataset: { label: e.label }, onclick: () => this.openEntry(e), onkeydown: (ev) => ev.key === "Enter" && this.openEntry(e) }, h("code", e.label), h("span.sub", `${fmtNumber(e.points)} points${e.units ? ` · ${Object.values(e.units).filter(Boolean).slice(0, 2).join(", ")}` : ""}`));
        return li;
      })));
      const pick = entries.find((e) => e.label === (select || this.selectedLabel));
      if (pick) this.openEntry(pick);
    } catch (err) {
      setChildren(this.entries, errorBox(err, "Session data could not be listed"));
    }
  }

  async openEntry(entry) {
    this.selectedLabel = entry.label;
    for (const li of this.entries.querySelectorAll("li")) li.setAttribute("aria-selected", String(li.dataset.label === entry.label));
    const sid = state.sessionId;
    const base = `${sessionPath(sid)}/entries/${encodeURIComponent(entry.label)}`;
    const previewBox = h("div.preview", loading("Loading preview…"));
    const statsBox = h("div.stats", loading("Computing statistics…"));
    const exportButtons = ["csv", "parquet", "netcdf"].map((format) => h("button.small", { onclick: () => this.exportEntry(base, entry.label, format) }, format === "netcdf" ? "netCDF" : format === "csv" ? "CSV" : "Parquet"));
    setChildren(
      this.entryView,
      h("div.entry-head", h("h2", h("code", entry.label)), h("span.spacer"), h("span.muted", "Export "), exportButtons),
      h("p.citation", citation(entry)),
      h("div.entry-facts", `${fmtNumber(entry.points)} points`, entry.start ? ` · ${fmtTime(entry.start)} – ${fmtTime(entry.stop)}` : "", entry.description ? ` · ${entry.description}` : ""),
      h("div.entry-panes", h("section", h("h3", "Preview (head and tail)"), previewBox), h("section", h("h3", "Statistics"), statsBox)),
    );
    api(`${base}/preview`, { query: { n: 5 } })
      .then((p) => setChildren(previewBox, previewTable(p)))
      .catch((err) => setChildren(previewBox, errorBox(err, "No preview")));
    api(`${base}/describe`)
      .then((s) => setChildren(statsBox, statsTable(s)))
      .catch((err) => setChildren(statsBox, errorBox(err, "No statistics")));
  }

  async exportEntry(base, label, format) {
    try {
      const ext = { csv: "csv", parquet: "parquet", netcdf: "nc" }[format];
      const name = await download(`${base}/export`, { format }, `${label}.${ext}`);
      toast(`Saved ${name}`);
    } catch (err) {
      toastError(err, "Export failed: ");
    }
  }
}

/** Progress as a fraction from whatever counters the server sent (null when unknown). */
function progressFraction(data) {
  if (!data || typeof data !== "object") return null;
  if (typeof data.fraction === "number") return data.fraction;
  const pairs = [["done", "total"], ["bytes", "total_bytes"], ["rows", "total_rows"], ["chunks_done", "chunks"], ["completed", "total"]];
  for (const [a, b] of pairs) if (typeof data[a] === "number" && data[b] > 0) return Math.min(1, data[a] / data[b]);
  return null;
}

/** The citation records of an entry: its dataset's, or for computed data its inputs'. */
export function citationsOf(entry) {
  if (Array.isArray(entry.citations) && entry.citations.length) return entry.citations;
  if (entry.citation && Object.keys(entry.citation).length) return [entry.citation];
  return [];
}

/** One line naming dataset, PI, DOI and provider; the archive's generic text when none is known. */
export function citationLine(c) {
  const parts = [`Data: ${c.dataset || "?"}`];
  if (c.pi) parts.push(`PI ${c.pi}`);
  if (c.doi) parts.push(`doi:${c.doi}`);
  if (c.provider) parts.push(`via ${c.provider}`);
  return parts.join("; ");
}

/** How to cite an entry: every dataset it comes from, with DOI and PI when known. */
export function citation(entry) {
  const known = citationsOf(entry);
  if (known.length) return known.map(citationLine).join(" · ");
  const ds = entry.dataset || String(entry.label).split(".")[0];
  const today = new Date().toISOString().slice(0, 10);
  return `Data: ${ds}${entry.parameter ? ` (${entry.parameter})` : ""}, NASA Space Physics Data Facility CDAWeb, https://cdaweb.gsfc.nasa.gov/ (accessed ${today}). Cite the instrument team's reference given in the dataset's metadata.`;
}

function previewTable(p) {
  const rows = [...(p.head || [])];
  const tail = (p.tail || []).filter((r) => !rows.some((x) => x.index === r.index));
  const columns = Object.keys(rows[0] || tail[0] || {});
  if (!columns.length) return h("p.muted", "No rows.");
  const gap = tail.length && rows.length ? [{ [columns[0]]: `… ${fmtNumber((p.points || 0) - rows.length - tail.length)} rows …` }] : [];
  return h("div.table-scroll", table(columns, [...rows, ...gap, ...tail].map((r) => Object.fromEntries(columns.map((c) => [c, c === "index" || c === "time" ? fmtTime(r[c]) : r[c]])))));
}

/** describe_data output as a table: one row per column, one column per statistic. */
function statsTable(s) {
  const stats = s.statistics || s.stats || s.columns || null;
  if (stats && typeof stats === "object" && !Array.isArray(stats)) {
    const rows = Object.entries(stats).map(([column, values]) => ({ column, ...(typeof values === "object" ? values : { value: values }) }));
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const extra = Object.entries(s).filter(([k, v]) => k !== "status" && v !== stats && (typeof v !== "object" || v === null));
    return h("div", extra.length ? h("dl.facts", extra.map(([k, v]) => [h("dt", k), h("dd", typeof v === "number" ? fmtNumber(v) : fmtTime(String(v)))])) : null, h("div.table-scroll", table(keys, rows)));
  }
  const flat = Object.entries(s).filter(([k]) => k !== "status");
  return h("dl.facts", flat.map(([k, v]) => [h("dt", k), h("dd", typeof v === "object" ? JSON.stringify(v) : typeof v === "number" ? fmtNumber(v) : String(v))]));
}
