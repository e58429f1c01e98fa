// Plotly figures in the page. Plotly.js is served by the xhelio server from the `plotly`
// Python package (no CDN) and loaded on first use. Every figure is drawn with a fixed
// `uirevision`, so a figure updated while the user zoomed keeps the zoom and pan.

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

/**
 * Draw or update a figure in `el`, keeping the user's zoom/pan (same uirevision).
 * The server's renderer fixes width for files; in the page the figure fills its box.
 */
export async function drawFigure(el, figure, { revision = "xhelio", height } = {}) {
  const Plotly = await ensurePlotly();
  const layout = { ...(figure.layout || {}) };
  delete layout.width;
  layout.autosize = true;
  layout.uirevision = revision;
  if (height) layout.height = height;
  // A long title would overflow a box narrower than the figure the server laid out:
  // wrap it onto lines (Plotly takes <br>) and give the top margin room for them.
  const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
  const perLine = Math.floor((el.clientWidth || 800) / 7.5);
  if (title?.text && !title.text.includes("<br") && title.text.length > perLine) {
    const lines = wrap(title.text, perLine);
    layout.title = { ...title, text: lines.join("<br>"), font: { ...(title.font || {}), size: 13 } };
    const margin = layout.margin || {};
    layout.margin = { ...margin, t: Math.max(margin.t ?? 80, 40 + 17 * lines.length) };
  }
  const config = { responsive: true, displaylogo: false, scrollZoom: false, toImageButtonOptions: { format: "png", scale: 2 } };
  await Plotly.react(el, figure.data || [], layout, config);
  return el;
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
