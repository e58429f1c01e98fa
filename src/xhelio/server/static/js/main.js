// The app shell: navigation, client-side routing, the session sidebar and the status badge.
// Each page is a module exporting mount(root, params) that returns an unmount function.

import { setToken } from "./api.js";
import { loadStatus, onChange, state } from "./state.js";
import { mountSessions } from "./sessions.js";
import { h, setChildren, errorBox } from "./ui.js";

const PAGES = {
  chat: () => import("./pages/chat.js"),
  data: () => import("./pages/data.js"),
  pipelines: () => import("./pages/pipelines.js"),
  gallery: () => import("./pages/gallery.js"),
  memory: () => import("./pages/memory.js"),
  settings: () => import("./pages/settings.js"),
};

/** Map a path to a page and its parameters. */
function route(pathname) {
  const parts = pathname.replace(/\/+$/, "").split("/").filter(Boolean);
  if (!parts.length) return { page: "chat", params: {} };
  if (parts[0] === "chat") return { page: "chat", params: { sessionId: parts[1] ? decodeURIComponent(parts[1]) : null } };
  if (parts[0] in PAGES) return { page: parts[0], params: { rest: parts.slice(1) } };
  return { page: "notfound", params: {} };
}

let unmount = null;
let renderToken = 0;

/** Open or close the navigation drawer (the sidebar collapses on small screens). */
function setDrawer(open) {
  document.body.classList.toggle("nav-open", open);
  document.getElementById("nav-toggle").setAttribute("aria-expanded", String(open));
}
document.getElementById("nav-toggle").addEventListener("click", () => setDrawer(!document.body.classList.contains("nav-open")));
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && document.body.classList.contains("nav-open")) setDrawer(false);
});

async function render() {
  setDrawer(false);
  const { page, params } = route(location.pathname);
  const root = document.getElementById("page");
  const token = ++renderToken;
  if (unmount) {
    try {
      unmount();
    } catch (err) {
      console.error(err);
    }
    unmount = null;
  }
  for (const link of document.querySelectorAll("#nav a[data-page]")) {
    if (link.dataset.page === page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  root.className = `page page-${page}`;
  if (page === "notfound") {
    setChildren(root, h("div.pad", h("h1", "Page not found"), h("p", "There is no page at ", h("code", location.pathname), ". ", h("a", { href: "/", "data-link": "" }, "Go to Chat"), ".")));
    return;
  }
  try {
    const module = await PAGES[page]();
    if (token !== renderToken) return;
    root.replaceChildren();
    unmount = module.mount(root, params) || null;
    document.title = `xhelio · ${page[0].toUpperCase()}${page.slice(1)}`;
  } catch (err) {
    setChildren(root, h("div.pad", errorBox(err, "This page could not be loaded")));
  }
}

/** Go to a path inside the app without reloading. */
export function navigate(path, { replace = false } = {}) {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  render();
}
window.xhelioNavigate = navigate;

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-link]");
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  let path = link.getAttribute("href");
  // The Chat link opens this tab's session.
  if (link.dataset.page === "chat" && state.sessionId) path = `/chat/${state.sessionId}`;
  navigate(path);
});
window.addEventListener("popstate", render);

function renderBadge() {
  const badge = document.getElementById("mode-badge");
  const status = state.status;
  if (!status) {
    badge.hidden = false;
    badge.textContent = "no server";
    badge.className = "badge bad";
    return;
  }
  badge.hidden = false;
  badge.textContent = status.offline ? "offline" : "LLM";
  badge.className = `badge ${status.offline ? "offline" : "online"}`;
  badge.title = status.offline ? `Offline mode: ${status.reason || "no model configured"}` : `Models: ${Object.values(status.models || {}).filter(Boolean).join(", ")}`;
}

// A server with XHELIO_API_TOKEN answers 401 until the user gives the token.
window.addEventListener("xhelio:unauthorized", () => {
  if (document.getElementById("token-dialog")) return;
  const input = h("input", { type: "password", id: "token-input", autocomplete: "off", "aria-label": "API token" });
  const dialog = h(
    "form.message.warn",
    { onsubmit: (e) => { e.preventDefault(); setToken(input.value.trim()); location.reload(); } },
    h("strong", "This server needs an API token. "),
    "Enter the value of XHELIO_API_TOKEN: ",
    input,
    h("button.primary", { type: "submit" }, "Use token"),
  );
  dialog.id = "token-dialog";
  dialog.setAttribute("role", "dialog");
  // Outside #page, which every page render replaces.
  document.body.append(dialog);
  input.focus();
});

onChange((what) => {
  if (what === "status") renderBadge();
});

mountSessions(document.getElementById("sessions"));
loadStatus();
render();
