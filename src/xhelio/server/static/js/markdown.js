// A small, safe Markdown renderer for answers: headings, paragraphs, lists, code blocks,
// **bold**, *emphasis*, `code` and http(s) links. It builds DOM nodes (never innerHTML),
// so model text can never inject markup or script.

import { h } from "./ui.js";

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\(https?:\/\/[^\s)]+\))/g;

/** Inline spans of one line of text as nodes. */
function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const token = m[0];
    if (m[1]) out.push(h("code", token.slice(1, -1)));
    else if (m[2]) out.push(h("strong", token.slice(2, -2)));
    else if (m[3]) out.push(h("em", token.slice(1, -1)));
    else {
      const [, label, href] = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(token);
      out.push(h("a", { href, target: "_blank", rel: "noopener noreferrer" }, label));
    }
    last = m.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Render Markdown text into a fragment of block elements. */
export function renderMarkdown(text) {
  const root = document.createDocumentFragment();
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) {
      const p = h("p");
      para.forEach((line, i) => {
        if (i) p.append(h("br"));
        p.append(...inline(line).map((n) => (typeof n === "string" ? document.createTextNode(n) : n)));
      });
      root.append(p);
      para = [];
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i += 1; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      root.append(h("pre", h("code", code.join("\n"))));
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      root.append(h(`h${Math.min(6, heading[1].length + 2)}`, inline(heading[2])));
    } else if (item) {
      if (para.length) flush();
      const ordered = item[1] !== undefined;
      if (!list || (list.tagName === "OL") !== ordered) {
        list = h(ordered ? "ol" : "ul");
        root.append(list);
      }
      list.append(h("li", inline(item[2])));
    } else if (!line.trim()) {
      flush();
    } else {
      if (list) list = null;
      para.push(line);
    }
  }
  flush();
  return root;
}
