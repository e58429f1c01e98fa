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
  const config = { responsive: true, displaylogo: false, scrollZoom: false, toImageButtonOptions: { format: "png", scale: 2 } };
  await Plotly.react(el, figure.data || [], layout, config);
  return el;
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
