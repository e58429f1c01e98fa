// Small DOM helpers shared by every page: element builder, formatting, messages.

/**
 * Build an element: h("button.primary", {onclick, title}, "text", child...).
 * Attributes starting with "on" become listeners; `dataset`/`style` objects are merged.
 */
export function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs === null || typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
    else if (key === "class") el.className += ` ${value}`;
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function setChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A readable error box (never a blank pane): the error type and its message. */
export function errorBox(err, title = "Something went wrong") {
  const type = errorType(err);
  return h(
    "div.message.error",
    { role: "alert" },
    h("strong", title),
    type ? h("span.err-type", ` (${type})`) : null,
    h("div.err-text", err?.message || String(err)),
  );
}

/** The error's class name when it is one (UnknownDatasetError), not an HTTP status. */
function errorType(err) {
  const type = String(err?.type || "");
  return /^[A-Z][A-Za-z]+$/.test(type) ? type : "";
}

/** An informational box. */
export function infoBox(text, kind = "info") {
  return h(`div.message.${kind}`, { role: kind === "info" ? "status" : "alert" }, text);
}

const toastRoot = () => document.getElementById("toasts");

/** A transient notice in the corner (errors stay until dismissed). */
export function toast(text, kind = "info") {
  const close = h("button.icon", { "aria-label": "Dismiss", onclick: () => el.remove() }, "×");
  const el = h(`div.toast.${kind}`, { role: kind === "error" ? "alert" : "status" }, h("span", text), close);
  toastRoot()?.append(el);
  if (kind !== "error") setTimeout(() => el.remove(), 5000);
  return el;
}

/** Show an ApiError (or any error) as a toast. */
export function toastError(err, prefix = "") {
  const type = errorType(err) ? `${errorType(err)}: ` : "";
  return toast(`${prefix}${type}${err?.message || err}`, "error");
}

export function fmtNumber(value) {
  if (value === null || value === undefined || value === "") return "";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return value.toExponential(3);
  return value.toFixed(abs < 1 ? 4 : abs < 100 ? 3 : 2).replace(/\.?0+$/, "");
}

export function fmtTime(iso) {
  if (iso === null || iso === undefined || iso === "") return "";
  // Epoch seconds (operation records) become the same UTC text as ISO strings.
  if (typeof iso === "number") iso = new Date(iso * 1000).toISOString();
  return String(iso).replace("T", " ").replace(/(\.\d+)?(\+00:00|Z)$/, "");
}

/** An ISO 8601 duration ("PT4M", "PT0.092S", "P1D") as "4 min", "0.092 s", "1 d". */
export function fmtDuration(text) {
  const m = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(String(text || ""));
  if (!m || !m.slice(1).some(Boolean)) return text ? String(text) : "";
  const units = ["d", "h", "min", "s"];
  return m.slice(1).map((v, i) => (v ? `${Number(v)} ${units[i]}` : "")).filter(Boolean).join(" ");
}

/** "3 minutes ago"-style text for a timestamp. */
export function fmtAgo(iso) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const s = Math.max(0, (Date.now() - then) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(then).toISOString().slice(0, 10);
}

/** A table from rows of objects (columns in the given order). */
export function table(columns, rows, { caption, className = "grid" } = {}) {
  return h(
    `table.${className}`,
    caption ? h("caption", caption) : null,
    h("thead", h("tr", columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", rows.map((row) => h("tr", columns.map((c) => {
      const v = row[c];
      return h(typeof v === "number" ? "td.num" : "td", fmtCell(v));
    })))),
  );
}

function fmtCell(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "number") return fmtNumber(v);
  if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k} ${fmtCell(x)}`).join(", ");
  return String(v);
}

/** A spinner with a label, for panes that are loading. */
export function loading(text = "Loading…") {
  return h("div.loading", { role: "status" }, h("span.spinner", { "aria-hidden": "true" }), text);
}
