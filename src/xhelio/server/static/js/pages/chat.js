// The Chat page: the interactive figure above the conversation, the streamed answer, live
// activity, plan with retry/cancel, tokens per agent, follow-up suggestions, input history
// with the arrow keys. A running request is followed over SSE and resumed after a drop.

import { api, download, sessionPath, ApiError } from "../api.js";
import { drawFigure, downloadPng, ensurePlotly, purgeFigure } from "../plot.js";
import { renderMarkdown } from "../markdown.js";
import { liveRun } from "../sse.js";
import { onChange, setSession, sessionsChanged, state } from "../state.js";
import { errorBox, h, loading, setChildren, toastError, toast } from "../ui.js";
import { ActivityPanel, PlanPanel, UsagePanel } from "./chat_panels.js";

const EXAMPLES = [
  "ACE magnetic field magnitude for 2024-01-15",
  "Plot Wind solar wind speed and density last week of March 2024",
  "OMNI Dst during the Halloween 2003 storm",
  "list missions",
];

/** An answer opens with its short answer (the composer puts it first): mark that paragraph
 * so it reads as the lead, the differences and detail after it. */
function markShortAnswer(text) {
  const first = text.firstElementChild;
  if (first?.tagName === "P") first.classList.add("answer-short");
}

export function mount(root, params) {
  if (params.sessionId) setSession(params.sessionId);
  else if (state.sessionId) history.replaceState(null, "", `/chat/${state.sessionId}`);
  // Start loading Plotly.js now, so the first figure is drawn the moment it arrives.
  ensurePlotly().catch(() => {});
  const page = new ChatPage(root);
  page.load();
  return () => page.destroy();
}

class ChatPage {
  constructor(root) {
    this.sid = state.sessionId;
    this.busy = false;
    this.controller = null;
    this.inputHistory = [];
    this.historyIndex = -1;
    this.draft = "";
    this.hasFigure = false;

    this.figureBox = h("div.figure-plot", { id: "figure", "aria-label": "Current figure" });
    this.figureBar = h(
      "div.figure-bar",
      h("span.figure-title", "Figure"),
      h("span.spacer"),
      h("button.small", { onclick: () => downloadPng(this.figureBox, "xhelio-figure"), title: "Save the figure as shown (PNG)" }, "PNG"),
      h("button.small", { onclick: () => this.exportFigure("pdf") }, "PDF"),
      h("button.small", { onclick: () => this.exportFigure("html") }, "HTML"),
      h("button.small.maximise", { onclick: () => this.toggleMaximised(), title: "Maximise the figure (Esc to restore)", "aria-pressed": "false" }, "⤢"),
    );
    this.figureArea = h("section.figure-area", { "aria-label": "Figure", hidden: true }, this.figureBar, this.figureBox);
    this.conversation = h("div.conversation", { role: "log", "aria-live": "polite", "aria-label": "Conversation" });
    this.suggestions = h("div.suggestions", { "aria-label": "Suggested follow-ups" });
    this.input = h("textarea", { id: "ask-input", rows: 2, placeholder: "Ask about heliophysics data… (Enter to send, Shift+Enter for a new line, ↑/↓ for history)", "aria-label": "Your request" });
    this.send = h("button.primary", { id: "send", type: "submit" }, "Send");
    this.cancelButton = h("button.danger", { id: "cancel", type: "button", hidden: true, onclick: () => this.cancel() }, "Cancel");
    this.deep = h("input", { id: "deep", type: "checkbox" });
    const deepSwitch = h("label.deep-switch", { title: "Deep analysis: a reviewed plan of stages with success criteria, checked after each stage, ending in a report" }, this.deep, " Deep");
    this.reportButton = h("button.small", { id: "report", type: "button", title: "Download this session's report (HTML: question, steps, figures, numbers, citations, how to rerun)", onclick: () => this.downloadReport() }, "Report");
    this.composer = h("form.composer", { onsubmit: (e) => { e.preventDefault(); this.ask(this.input.value); } }, this.input, h("div.composer-buttons", this.send, this.cancelButton, deepSwitch, this.reportButton));
    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.onEscape = (e) => {
      if (e.key === "Escape" && this.figureArea.classList.contains("maximised")) this.toggleMaximised();
    };
    document.addEventListener("keydown", this.onEscape);
    let resizeTimer = 0;
    this.onResize = () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => this.redraw(), 150);
    };
    window.addEventListener("resize", this.onResize);

    this.activity = new ActivityPanel();
    this.plan = new PlanPanel({ onRetry: () => this.planAction("retry"), onCancel: () => this.planAction("cancel") });
    this.usage = new UsagePanel();

    this.main = h("section.chat-main", this.figureArea, this.conversation, this.suggestions, this.composer);
    setChildren(root, h("div.chat", this.main, h("aside.chat-side", { "aria-label": "Request details" }, this.activity.el, this.plan.el, this.usage.el)));
  }

  destroy() {
    this.stopStatus?.();
    document.removeEventListener("keydown", this.onEscape);
    window.removeEventListener("resize", this.onResize);
    this.controller?.abort();
    purgeFigure(this.figureBox);
  }

  // Loading a session -------------------------------------------------------------------

  async load() {
    if (!this.sid) {
      this.welcome();
      this.focusInput();
      return;
    }
    setChildren(this.conversation, loading("Loading session…"));
    let detail;
    try {
      detail = await api(sessionPath(this.sid));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        setSession(null);
        history.replaceState(null, "", "/");
        setChildren(this.conversation, errorBox(err, "This session no longer exists"), h("p.muted.pad", "Ask something to start a new session."));
        return;
      }
      setChildren(this.conversation, errorBox(err, "The session could not be loaded"));
      return;
    }
    this.conversation.replaceChildren();
    for (const msg of detail.history || []) {
      if (msg.role === "user") {
        this.addMessage("user", msg.content);
        this.inputHistory.push(msg.content);
      } else {
        this.addMessage("assistant", msg.content, msg.error);
      }
    }
    if (!(detail.history || []).length) this.welcome();
    if (detail.figure) this.showFigure(detail.figure);
    if (detail.plan) this.plan.show(detail.plan);
    this.scrollDown();
    // A run still going (started before a reload, on another page, or elsewhere such as a
    // pipeline replay) is followed again from its first step: the activity replays what
    // was missed, then the answer and figure arrive live.
    const param = new URLSearchParams(location.search).get("after");
    const after = param === null ? NaN : Number(param);
    if (location.search) history.replaceState(null, "", location.pathname);
    const turnStart = detail.turn_after_event_id ?? detail.last_event_id;
    if (detail.busy) this.follow(Number.isInteger(after) && after >= 0 && after <= detail.last_event_id ? after : turnStart);
    this.focusInput();
  }

  /** Focus the composer after a load, unless the user is typing elsewhere (the token
   * prompt, the sidebar's rename box): a late load must not steal their keystrokes. */
  focusInput() {
    const active = document.activeElement;
    const typing = active && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
    if (typing && active !== this.input) return;
    this.input.focus();
  }

  welcome() {
    const intro = h("p.welcome-intro");
    const showMode = () => {
      const offline = state.status?.offline;
      intro.replaceChildren("xhelio finds CDAWeb datasets, fetches them, computes and plots. ", offline ? "The server runs in offline mode: requests are read by a rule-based interpreter, no model key needed." : "");
    };
    showMode();
    // A cold server answers /status seconds after the page is drawn: complete the text then.
    this.stopStatus?.();
    this.stopStatus = onChange((what) => {
      if (what === "status") showMode();
    });
    setChildren(
      this.conversation,
      h(
        "div.welcome",
        h("h1", "Ask for heliophysics data"),
        intro,
        h("div.examples", EXAMPLES.map((text) => h("button.chip", { onclick: () => this.ask(text) }, text))),
      ),
    );
  }

  // Conversation ------------------------------------------------------------------------

  addMessage(role, text, error) {
    // Answers are Markdown (rendered safely); the user's own text is shown as typed.
    const body = h("div.msg-text", role === "assistant" ? renderMarkdown(text) : text || "");
    if (role === "assistant") markShortAnswer(body);
    const el = h(`div.msg.${role}`, h("div.msg-role", role === "user" ? "You" : "xhelio"), body);
    if (error) el.append(errorBox(typeof error === "string" ? { message: error } : error, "The request failed"));
    this.conversation.querySelector(".welcome")?.remove();
    this.conversation.append(el);
    this.scrollDown();
    return el;
  }

  scrollDown() {
    this.conversation.scrollTop = this.conversation.scrollHeight;
  }

  /** The figure fills the window (or returns to its place); it is redrawn to the new size. */
  toggleMaximised() {
    const on = this.figureArea.classList.toggle("maximised");
    this.figureBar.querySelector(".maximise").setAttribute("aria-pressed", String(on));
    this.redraw();
  }

  redraw() {
    if (this.figure && this.hasFigure) drawFigure(this.figureBox, this.figure).catch(() => {});
  }

  async showFigure(figure) {
    this.figure = figure;
    this.figureArea.hidden = false;
    this.figureBar.querySelector(".figure-title").textContent = figure.layout?.title?.text || (typeof figure.layout?.title === "string" ? figure.layout.title : "Figure");
    try {
      await drawFigure(this.figureBox, figure);
      this.hasFigure = true;
    } catch (err) {
      setChildren(this.figureBox, errorBox(err, "The figure could not be drawn"));
    }
  }

  async exportFigure(format) {
    try {
      const name = await download(`${sessionPath(this.sid)}/figure/export`, { format }, `xhelio-figure.${format}`);
      toast(`Saved ${name}`);
    } catch (err) {
      toastError(err, `${format.toUpperCase()} export failed: `);
    }
  }

  async downloadReport() {
    if (!this.sid) {
      toast("Ask something first: the report describes this session's work.");
      return;
    }
    try {
      const name = await download(`${sessionPath(this.sid)}/report`, { format: "html", download: "true" }, "xhelio-report.html");
      toast(`Saved ${name}`);
    } catch (err) {
      toastError(err, "Report failed: ");
    }
  }

  showSuggestions(list) {
    setChildren(this.suggestions, (list || []).map((text) => h("button.chip", { onclick: () => this.ask(text), title: "Ask this" }, text)));
  }

  // Input history -----------------------------------------------------------------------

  onKey(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.ask(this.input.value);
      return;
    }
    const atStart = this.input.selectionStart === 0 && this.input.selectionEnd === 0;
    const atEnd = this.input.selectionStart === this.input.value.length;
    const oneLine = !this.input.value.includes("\n");
    if (e.key === "ArrowUp" && (oneLine || atStart) && this.inputHistory.length) {
      e.preventDefault();
      if (this.historyIndex === -1) {
        this.draft = this.input.value;
        this.historyIndex = this.inputHistory.length;
      }
      this.historyIndex = Math.max(0, this.historyIndex - 1);
      this.input.value = this.inputHistory[this.historyIndex];
    } else if (e.key === "ArrowDown" && (oneLine || atEnd) && this.historyIndex !== -1) {
      e.preventDefault();
      this.historyIndex += 1;
      if (this.historyIndex >= this.inputHistory.length) {
        this.historyIndex = -1;
        this.input.value = this.draft;
      } else {
        this.input.value = this.inputHistory[this.historyIndex];
      }
    } else if (e.key === "Escape" && this.busy) {
      this.cancel();
    }
  }

  // Running a request -------------------------------------------------------------------

  setBusy(busy) {
    this.busy = busy;
    // Cancel takes Send's place (same box), so the composer never changes size.
    this.send.hidden = busy;
    this.cancelButton.hidden = !busy;
    this.cancelButton.disabled = false;
    this.composer.classList.toggle("busy", busy);
  }

  async ask(text) {
    const question = (text || "").trim();
    if (!question || this.busy) return;
    if (this.inputHistory.at(-1) !== question) this.inputHistory.push(question);
    this.historyIndex = -1;
    this.input.value = "";
    this.showSuggestions([]);
    this.addMessage("user", question);
    const body = { question, session_id: this.sid };
    if (this.deep.checked) body.deep = true;
    await this.run({ url: "/api/v1/ask/stream", method: "POST", body });
  }

  /** Follow a request already running (after a reload): events after `afterId`. */
  async follow(afterId) {
    const query = new URLSearchParams({ follow: "true", after: String(afterId ?? 0) });
    await this.run({ url: `/api/v1${sessionPath(this.sid)}/events?${query}`, method: "GET" });
  }

  async run(request) {
    this.setBusy(true);
    this.activity.clear();
    this.activity.setConnection("live");
    const reply = this.addMessage("assistant", "");
    reply.classList.add("pending");
    const text = reply.querySelector(".msg-text");
    text.append(h("span.typing", { "aria-label": "working" }, h("i"), h("i"), h("i")));
    this.reply = reply;
    this.controller = new AbortController();
    let response = null;
    let finished = false;
    let streamError = null;
    try {
      await liveRun({
        ...request,
        signal: this.controller.signal,
        sessionId: () => this.sid,
        onConnection: (s, detail) => this.activity.setConnection(s, detail),
        onEvent: (event) => {
          if (event.type === "done") {
            finished = true;
            response = event.data?.response || null;
          }
          else if (event.type === "error") streamError = event.data;
          this.onEvent(event);
        },
      });
    } catch (err) {
      if (err.name !== "AbortError") streamError = err;
    }
    reply.classList.remove("pending");
    reply.querySelector(".typing")?.remove();
    this.cancelRow?.remove();
    this.cancelRow = null;
    if (response) this.finish(response);
    else if (finished && this.sid) await this.finishFromSession(streamError);
    else if (streamError) reply.append(errorBox(streamError, "The request failed"));
    else if (!text.textContent) text.textContent = "(stopped)";
    this.setBusy(false);
    this.controller = null;
    sessionsChanged();
    this.input.focus();
  }

  onEvent(event) {
    const d = event.data || {};
    this.activity.handle(event);
    switch (event.type) {
      case "session":
        if (d.session_id && d.session_id !== this.sid) {
          this.sid = d.session_id;
          setSession(this.sid);
          history.replaceState(null, "", `/chat/${this.sid}`);
          sessionsChanged();
        }
        break;
      case "answer":
        this.setReply(d.text);
        break;
      case "figure":
        if (d.figure) this.showFigure(d.figure);
        break;
      case "usage":
        this.usage.show(d);
        break;
      case "plan":
      case "plan_task":
        this.plan.update(d);
        break;
      default:
        break;
    }
  }

  setReply(textValue) {
    const text = this.reply.querySelector(".msg-text");
    const typing = text.querySelector(".typing");
    text.replaceChildren(renderMarkdown(textValue));
    markShortAnswer(text);
    if (typing && this.busy) text.append(typing);
    this.scrollDown();
  }

  finish(r) {
    if (r.session_id && r.session_id !== this.sid) {
      this.sid = r.session_id;
      setSession(this.sid);
      history.replaceState(null, "", `/chat/${this.sid}`);
    }
    this.setReply(r.answer || (r.error ? "" : "(no answer)"));
    if (r.error) this.reply.append(errorBox(r.error, r.error.type === "Cancelled" ? "Stopped" : "The request failed"));
    if (r.figure) this.showFigure(r.figure);
    this.plan.show(r.plan || null);
    this.usage.show(r.usage);
    this.showSuggestions(r.suggestions);
    if (r.elapsed_s != null) this.reply.querySelector(".msg-role").append(h("span.muted", ` · ${r.elapsed_s.toFixed(1)} s`));
  }

  /** After following a run on the events route (whose `done` has no response): show
   * the outcome as the server saved it. */
  async finishFromSession(streamError) {
    try {
      const detail = await api(sessionPath(this.sid));
      const last = [...(detail.history || [])].reverse().find((m) => m.role === "assistant");
      this.setReply(last?.content || "");
      if (last?.error) this.reply.append(errorBox(typeof last.error === "string" ? { message: last.error } : last.error, "The request failed"));
      else if (streamError) this.reply.append(errorBox(streamError, "The request failed"));
      if (detail.figure) this.showFigure(detail.figure);
      this.plan.show(detail.plan || null);
    } catch (err) {
      this.reply.append(errorBox(err, "The result could not be loaded"));
    }
  }

  async cancel() {
    this.cancelButton.disabled = true;
    if (!this.sid) {
      this.controller?.abort();
      return;
    }
    try {
      const r = await api(`${sessionPath(this.sid)}/cancel`, { method: "POST" });
      if (!r.cancelled) toast("Nothing was running.");
      // Shown only until the run ends: its own "Cancelled" step then says what happened.
      else if (this.busy) this.cancelRow = this.activity.add("failed", "■", "Cancelling…");
    } catch (err) {
      toastError(err, "Cancel failed: ");
      this.cancelButton.disabled = false;
    }
  }

  async planAction(action) {
    if (!this.sid) return;
    if (action === "cancel" && this.busy) return this.cancel();
    try {
      const r = await api(`${sessionPath(this.sid)}/plan/${action}`, { method: "POST" });
      if (action === "retry" && r?.started) {
        this.addMessage("user", `retry: ${r.task || "failed task"}`);
        await this.follow(r.after_event_id);
      } else if (r?.plan) {
        this.plan.show(r.plan);
      } else if (r?.message) {
        toast(r.message);
      }
    } catch (err) {
      this.conversation.append(errorBox(err, action === "retry" ? "Retry failed" : "Cancel failed"));
      this.scrollDown();
    }
  }
}

