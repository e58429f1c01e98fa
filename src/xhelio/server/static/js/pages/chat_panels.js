// The Chat page's side panels: the live activity stream (delegations, tool calls, data
// fetched, progress, plan steps), the plan with its task statuses, and tokens per agent.
// Each panel has a fixed box that scrolls inside, so streaming never moves the layout.

import { h, setChildren, fmtNumber, fmtTime } from "../ui.js";

const CATEGORY = [
  [/fetch|download|hapi|cdf|load/i, "data"],
  [/compute|custom|operation|derive|sandbox/i, "compute"],
  [/plot|figure|render|export|style/i, "viz"],
  [/catalog|search|browse|list_|describe_dataset|parameters/i, "catalog"],
];

function category(tool) {
  for (const [pattern, name] of CATEGORY) if (pattern.test(tool || "")) return name;
  return "other";
}

function short(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function brief(args) {
  if (!args || typeof args !== "object") return "";
  const parts = Object.entries(args)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${short(typeof v === "string" ? v : JSON.stringify(v), 60)}`);
  return short(parts.join(", "), 160);
}

/** The activity stream: one row per step, tool rows updated in place when they finish. */
export class ActivityPanel {
  constructor() {
    this.list = h("ol.activity-list", { "aria-label": "Activity steps" });
    this.connection = h("span.connection", { role: "status" });
    this.empty = h("p.muted.activity-empty", "Steps of a request appear here while it runs: delegations, tool calls, data fetched and plan tasks.");
    this.scroller = h("div.panel-scroll", this.empty, this.list);
    this.el = h("section.panel.activity", { "aria-label": "Activity" }, h("div.panel-head", h("h2", "Activity"), this.connection), this.scroller);
    this.open = new Map(); // "agent/tool" -> rows waiting for their result
    this.progressRow = null;
  }

  clear() {
    this.list.replaceChildren();
    this.open.clear();
    this.progressRow = null;
    this.empty.hidden = false;
  }

  setConnection(state, detail) {
    const text = {
      live: "",
      reconnecting: `Connection dropped, reconnecting (${detail || ""})…`,
      lost: "Connection lost. Reload the page to see the session as the server has it.",
      resume_unavailable: "Some steps could not be replayed after the reconnect.",
    }[state] ?? "";
    this.connection.textContent = text;
    this.connection.className = `connection ${state}`;
  }

  /** Whether the list is scrolled to its end (then new steps keep it there). */
  atBottom() {
    return this.scroller.scrollTop + this.scroller.clientHeight >= this.scroller.scrollHeight - 8;
  }

  add(kind, icon, ...content) {
    this.empty.hidden = true;
    const stick = this.atBottom();
    const row = h(`li.step.${kind}`, h("span.step-icon", { "aria-hidden": "true" }, icon), h("div.step-body", ...content));
    this.list.append(row);
    if (stick) this.scroller.scrollTop = this.scroller.scrollHeight;
    return row;
  }

  /** Handle one session event; returns true when it was an activity event. */
  handle(event) {
    const d = event.data || {};
    switch (event.type) {
      case "user_request":
        this.add("request", "❯", h("span.step-title", "Request"), h("span.step-detail", d.summary || ""));
        return true;
      case "delegation":
        this.add("delegation", "↪", h("span.step-title", `${d.agent || "agent"} → ${d.to || "agent"}`), h("span.step-detail", d.summary || ""));
        return true;
      case "tool_call": {
        // A delegation is a tool call of the delegating agent: shown as who hands what to whom.
        const tool = String(d.tool || "tool");
        const to = tool.startsWith("delegate_to_") ? `${tool.slice(12)}${d.args?.mission_id ? ` ${d.args.mission_id}` : ""}` : null;
        const title = to
          ? h("span.step-title", `${d.agent || "agent"} → ${to}`)
          : h("span.step-title", h("code", tool), h("span.agent", ` ${d.agent || ""}`));
        const detail = to && d.args?.request ? String(d.args.request) : brief(d.args);
        const row = this.add(`tool cat-${category(d.tool)} running${to ? " delegation" : ""}`, to ? "↪" : "⚙", title, h("span.step-detail", detail), h("span.step-status", "running…"));
        const key = `${d.agent}/${d.tool}`;
        if (!this.open.has(key)) this.open.set(key, []);
        this.open.get(key).push(row);
        return true;
      }
      case "tool_result":
      case "tool_error": {
        const key = `${d.agent}/${d.tool}`;
        const row = this.open.get(key)?.shift() || this.add(`tool cat-${category(d.tool)}`, "⚙", h("span.step-title", h("code", d.tool || "tool"), h("span.agent", ` ${d.agent || ""}`)), h("span.step-status"));
        const failed = event.type === "tool_error" || d.status === "error";
        row.classList.remove("running");
        row.classList.add(failed ? "failed" : "ok");
        // The row grows when its result is written: keep the newest step in view.
        const stick = this.atBottom();
        const status = row.querySelector(".step-status") || row.querySelector(".step-body").appendChild(h("span.step-status"));
        const ms = d.duration_ms != null ? ` in ${fmtNumber(Math.round(d.duration_ms))} ms` : "";
        status.textContent = failed ? `failed${ms}: ${d.message || ""}` : `done${ms}${d.labels?.length ? ` → ${d.labels.join(", ")}` : ""}`;
        if (stick) this.scroller.scrollTop = this.scroller.scrollHeight;
        return true;
      }
      case "progress": {
        const text = d.summary || "working…";
        if (this.progressRow && this.progressRow === this.list.lastElementChild) {
          this.progressRow.querySelector(".step-detail").textContent = text;
        } else {
          this.progressRow = this.add("progress", "⇣", h("span.step-title", "Progress"), h("span.step-detail", text));
        }
        return true;
      }
      case "data":
        this.add("data", "▦", h("span.step-title", "Data ", h("code", d.label || "")), h("span.step-detail", `${fmtNumber(d.points)} points${d.start ? `, ${fmtTime(d.start)} – ${fmtTime(d.stop)}` : ""}`));
        return true;
      case "plan":
      case "plan_task":
        this.add("plan", "☰", h("span.step-title", event.type === "plan" ? "Plan" : "Task"), h("span.step-detail", `${d.status ? `[${d.status}] ` : ""}${d.summary || ""}`));
        return true;
      case "figure":
        this.add("viz", "◩", h("span.step-title", "Figure updated"));
        return true;
      case "error":
        this.add("failed", "⚠", h("span.step-title", d.type || "Error"), h("span.step-detail", d.message || ""));
        return true;
      case "detail":
        // What the answer composer took out of the answer: fetch logs, skipped candidates, advice.
        this.add("detail", "ℹ", h("span.step-title", "Detail"), h("span.step-detail", d.summary || ""));
        return true;
      case "turn_done":
        // Its summary repeats the answer shown in the conversation.
        this.add(d.status === "ok" ? "ok" : "failed", "✓", h("span.step-title", "Finished"), h("span.step-detail", d.status || ""));
        return true;
      case "session":
      case "answer":
      case "usage":
      case "done":
      case "resume_unavailable":
        return false;
      default:
        if (d.summary || d.tool) {
          this.add("other", "·", h("span.step-title", event.type), h("span.step-detail", short([d.agent, d.tool, d.status, d.summary].filter(Boolean).join(" · "), 160)));
          return true;
        }
        return false;
    }
  }
}

const STATUS_TEXT = { pending: "pending", in_progress: "running", completed: "done", failed: "failed", skipped: "skipped" };

/** The plan panel: tasks with their status, retry of failed tasks and cancel of the rest. */
export class PlanPanel {
  constructor({ onRetry, onCancel }) {
    this.retry = h("button.small", { onclick: onRetry, title: "Run the first failed task again" }, "Retry failed");
    this.cancel = h("button.small.danger", { onclick: onCancel, title: "Skip the plan's remaining tasks" }, "Cancel plan");
    this.body = h("div.panel-scroll");
    this.state = h("span.plan-state");
    this.el = h("section.panel.plan", { "aria-label": "Plan", hidden: true }, h("div.panel-head", h("h2", "Plan"), this.state, h("span.panel-actions", this.retry, this.cancel)), this.body);
    this.plan = null;
  }

  /** Show a plan ({id, status, tasks}) or hide the panel for null. */
  show(plan, { running = false } = {}) {
    this.plan = plan;
    this.el.hidden = !plan;
    if (!plan) return;
    const tasks = plan.tasks || [];
    this.state.textContent = plan.status ? ` · ${plan.status}` : "";
    this.retry.disabled = running || !tasks.some((t) => t.status === "failed");
    this.cancel.disabled = !(running || tasks.some((t) => t.status === "pending" || t.status === "in_progress"));
    setChildren(
      this.body,
      tasks.length
        ? h("ol.tasks", tasks.map((t) => h(`li.task.${t.status}`, h("span.badge", STATUS_TEXT[t.status] || t.status), " ", t.description, t.new_labels?.length ? h("span.muted", ` → ${t.new_labels.join(", ")}`) : null)))
        : h("p.muted", plan.summary || "No tasks yet."),
    );
  }

  /** A live plan event ({status, summary}) while the request runs. */
  update(data) {
    if (!this.plan) this.show({ status: data.status, tasks: [], summary: data.summary }, { running: true });
    else this.state.textContent = data.status ? ` · ${data.status}` : this.state.textContent;
  }
}

/** Tokens per agent, for the session's last request. */
export class UsagePanel {
  constructor() {
    this.body = h("div");
    this.el = h("details.panel.usage", h("summary", h("h2", "Token usage"), h("span.usage-total")), this.body);
    this.show(null);
  }

  show(usage) {
    // The server sends {agents: {name: counts}, total}; a bare {name: counts} is accepted too.
    const perAgent = usage && typeof usage.agents === "object" && usage.agents !== null ? usage.agents : usage || {};
    const rows = Object.entries(perAgent)
      .filter(([, u]) => u && typeof u === "object")
      .map(([agent, u]) => ({ agent, requests: u.requests ?? 0, input: u.input_tokens ?? 0, output: u.output_tokens ?? 0 }));
    const total = rows.reduce((sum, r) => sum + r.input + r.output, 0);
    this.el.querySelector(".usage-total").textContent = rows.length ? ` ${fmtNumber(total)} tokens` : " none";
    if (!rows.length) {
      setChildren(this.body, h("p.muted", "No model tokens used (offline mode uses none)."));
      return;
    }
    setChildren(this.body, h("table.grid.compact", h("thead", h("tr", ["agent", "requests", "in", "out"].map((c) => h("th", c)))), h("tbody", rows.map((r) => h("tr", h("td", r.agent), h("td.num", fmtNumber(r.requests)), h("td.num", fmtNumber(r.input)), h("td.num", fmtNumber(r.output)))))));
  }
}
