// Plotly figures in the page. Plotly.js is served by the xhelio server from the `plotly`
// Python package (no CDN) and loaded on first use. A figure's `uirevision` is derived from
// what it shows (its traces and their data span): the same figure restyled keeps the
// user's zoom and pan; a new, unrelated figure opens at its own full range.

let loader = null;

/** Load plotly.min.js once; resolves to window.Plotly. */
export function ensurePlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loader) {
    loader = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/assets/vendor/plotly.min.js";
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        loader = null;
        reject(new Error("Plotly.js could not be loaded from the xhelio server."));
      };
      document.head.append(script);
    });
  }
  return loader;
}

/** Plotly's modebar without the cloud, share and edit buttons: data never leaves the page. */
export const PLOT_CONFIG = Object.freeze({
  responsive: true,
  displaylogo: false,
  showSendToCloud: false,
  modeBarButtonsToRemove: ["sendDataToCloud", "editInChartStudio"],
  scrollZoom: false,
  toImageButtonOptions: { format: "png", scale: 2 },
});

// Below this many pixels of plot per panel a stacked figure scrolls instead of squeezing.
const MIN_PANEL_PX = 120;
// A box narrower than this (a phone) leaves the figure's title to the card's header.
const NARROW_PX = 600;

/** What a figure shows: trace names and data span. Equal for the same figure restyled. */
export function figureIdentity(figure) {
  const parts = (figure.data || []).map((t) => {
    const x = Array.isArray(t.x) ? t.x : [];
    return [t.name ?? "", t.type ?? "", t.yaxis ?? "", x[0] ?? "", x[x.length - 1] ?? ""].join("|");
  });
  let hash = 0;
  for (const ch of parts.join("\n")) hash = (Math.imul(hash, 31) + ch.codePointAt(0)) | 0;
  return `fig-${(hash >>> 0).toString(36)}`;
}

function panelCount(layout) {
  return Math.max(1, Object.keys(layout).filter((k) => /^yaxis\d*$/.test(k) && !layout[k]?.overlaying).length);
}

/**
 * Draw or update a figure in `el`, sized to `el`: panels share the box's height (the box
 * scrolls only when a panel would be shorter than MIN_PANEL_PX), the legend goes below the
 * plot when names are long or the box is narrow, hover shows every trace at one time.
 */
export async function drawFigure(el, figure, { revision, height } = {}) {
  const Plotly = await ensurePlotly();
  const layout = { ...(figure.layout || {}) };
  delete layout.width;
  layout.autosize = true;
  layout.uirevision = revision ?? figureIdentity(figure);
  const panels = panelCount(layout);
  const room = height || el.clientHeight || 0;
  if (!layout.hovermode || layout.hovermode === "closest") layout.hovermode = "x unified";
  placeLegend(el, figure, layout);
  // A long title would overflow a box narrower than the figure the server laid out:
  // wrap it onto lines (Plotly takes <br>) and give the top margin room for them.
  const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
  const perLine = Math.floor((el.clientWidth || 800) / 7.5);
  if (title?.text && (el.clientWidth || 800) < NARROW_PX) {
    // The card's header already names the figure: on a phone the panels get the room.
    layout.title = { ...title, text: "" };
    layout.margin = { ...(layout.margin || {}), t: 24 };
  } else if (title?.text && !title.text.includes("<br") && title.text.length > perLine) {
    const lines = wrap(title.text, perLine);
    layout.title = { ...title, text: lines.join("<br>"), font: { ...(title.font || {}), size: 13 } };
    const margin = layout.margin || {};
    layout.margin = { ...margin, t: Math.max(margin.t ?? 80, 40 + 17 * lines.length) };
  }
  wrapCitation(layout, el.clientWidth || 800);
  const margins = (layout.margin?.t ?? 80) + (layout.margin?.b ?? 80);
  if (room > 0) layout.height = Math.max(room - 4, panels * MIN_PANEL_PX + margins);
  fitAxisTitles(layout);
  await Plotly.react(el, figure.data || [], layout, PLOT_CONFIG);
  return el;
}

/**
 * A legend never squeezes the plot: with long names or a narrow box, one legend goes in
 * a horizontal band under the figure (names wrap there) instead of beside the panels.
 */
function placeLegend(el, figure, layout) {
  const names = (figure.data || []).filter((t) => t.showlegend !== false).map((t) => String(t.name ?? ""));
  const longest = Math.max(0, ...names.map((n) => n.length));
  const width = el.clientWidth || 800;
  if (longest * 7 < width * 0.18) return;
  for (const key of Object.keys(layout)) if (/^legend\d+$/.test(key)) delete layout[key];
  for (const trace of figure.data || []) delete trace.legend;
  layout.legend = { orientation: "h", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container" };
  const rows = Math.ceil((names.reduce((n, name) => n + name.length + 4, 0) * 7) / width);
  const margin = { ...(layout.margin || {}) };
  margin.b = (margin.b ?? 80) + 22 * Math.min(rows, 4);
  layout.margin = margin;
}

/** The citation under the figure wraps to the box's width (9 px text) instead of running off it. */
function wrapCitation(layout, width) {
  const perLine = Math.max(30, Math.floor((width - 90) / 5));
  let added = 0;
  layout.annotations = (layout.annotations || []).map((note) => {
    if (note.name !== "xhelio-citation" || typeof note.text !== "string") return note;
    const lines = note.text.split("<br>").flatMap((line) => wrap(line, perLine));
    added = lines.length - note.text.split("<br>").length;
    return { ...note, text: lines.join("<br>") };
  });
  if (added > 0) layout.margin = { ...(layout.margin || {}), b: (layout.margin?.b ?? 80) + 12 * added };
}

// Pixels one character of a y-axis title takes along the axis (12 px text, with room).
const AXIS_CHAR_PX = 7.5;

/**
 * Each y-axis title fits the panel it is drawn on, whatever the box's height: re-wrapped
 * to the panel's height in pixels, at most three lines, the unit (the last parenthesis)
 * always kept; a name too long for that is cut with "…" (the legend still has it whole).
 */
function fitAxisTitles(layout) {
  const margin = layout.margin || {};
  const inner = Math.max(60, (layout.height || 450) - (margin.t ?? 80) - (margin.b ?? 80));
  for (const key of Object.keys(layout)) {
    const axis = layout[key];
    if (!/^yaxis\d*$/.test(key) || !axis) continue;
    const title = typeof axis.title === "string" ? { text: axis.title } : axis.title;
    if (!title?.text) continue;
    const [low, high] = Array.isArray(axis.domain) ? axis.domain : [0, 1];
    const perLine = Math.max(8, Math.floor(((high - low) * inner) / AXIS_CHAR_PX));
    const plain = title.text.replace(/<br\s*\/?>/gi, " ").replace(/\s+/g, " ").trim();
    const found = plain.match(/^(.*\S)\s*(\([^()]*\))$/);
    const [name, unit] = found ? [found[1], found[2]] : [plain, ""];
    let lines = wrap(unit ? `${name} ${unit}` : name, perLine);
    if (lines.length > 3) {
      lines = wrap(name, perLine).slice(0, unit ? 2 : 3);
      const last = lines.length - 1;
      lines[last] = `${lines[last].slice(0, Math.max(1, perLine - 1))}…`;
      if (unit) lines.push(unit);
    }
    layout[key] = { ...axis, title: { ...title, text: lines.join("<br>") } };
  }
}

/** Split text into lines of at most `width` characters at spaces. */
function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Free a figure's resources before its element goes away. */
export function purgeFigure(el) {
  if (window.Plotly && el) window.Plotly.purge(el);
}

/** Save the figure drawn in `el` as a PNG from the browser. */
export async function downloadPng(el, filename = "xhelio-figure") {
  const Plotly = await ensurePlotly();
  await Plotly.downloadImage(el, { format: "png", filename, scale: 2 });
}
