// The Settings page: provider (derived from the models), model tiers, limits and memory
// options, written by the server to its config file. API keys never travel to the
// browser: the server only says whether each provider's key is present on its side.

import { api } from "../api.js";
import { loadStatus } from "../state.js";
import { errorBox, h, loading, setChildren } from "../ui.js";

const TIERS = {
  default: "Default (every tier without its own model)",
  orchestrator: "Orchestrator (main)",
  sub_agent: "Sub-agents",
  planner: "Planner",
  insight: "Insight (figure review)",
  inline: "Inline (suggestions)",
  fallback: "Fallback (on rate limits)",
};

const LIMITS = {
  http_timeout_s: ["HTTP timeout", "s", 1, 600, 1],
  http_retries: ["HTTP retries", "", 0, 10, 1],
  download_workers: ["Parallel downloads", "", 1, 32, 1],
  cache_max_mb: ["Cache size limit", "MB", 16, 1048576, 1],
  sandbox_timeout_s: ["Code run timeout", "s", 1, 3600, 1],
  sandbox_memory_mb: ["Code run memory", "MB", 64, 65536, 1],
  session_memory_mb: ["Data held per session", "MB", 16, 1048576, 1],
};
// Limits that are about memory are shown in the Memory card (they are saved as limits).
const MEMORY_LIMITS = new Set(["session_memory_mb", "sandbox_memory_mb"]);
const MEMORY_HINTS = {
  session_memory_mb: "A fetch that would take a session over this is refused with a range that fits.",
  sandbox_memory_mb: "Memory a computation may use.",
};
// Long-term memory settings ([memory] in the config file; see the Memory page).
const LONG_TERM_MEMORY = {
  enabled: ["Long-term memory on", "Off: no memory in prompts and no memory agent."],
  every_turns: ["Memory agent every N turns", "0 stops the background memory agent."],
  injection_tokens: ["Memory prompt budget (tokens)", "Sub-agents get half each."],
  per_type: ["Memories kept per type", "Over this, consolidation archives or merges."],
};

export function mount(root) {
  const body = h("div.settings-body", loading());
  setChildren(root, h("div.settings", h("div.page-head", h("h1", "Settings")), body));
  load(body);
}

async function load(body) {
  try {
    render(body, await api("/settings"));
  } catch (err) {
    setChildren(body, errorBox(err, "Settings could not be loaded"));
  }
}

function field(id, label, input, hint) {
  input.id = id;
  return h("div.field", h("label", { for: id }, label), input, hint ? h("span.hint", hint) : null);
}

function render(body, s) {
  const message = h("div.save-message", { "aria-live": "polite" });
  const modelInputs = {};
  const modelFields = Object.keys({ ...TIERS, ...(s.models || {}) }).map((tier) => {
    const input = h("input", { type: "text", value: s.models?.[tier] || "", placeholder: "provider:model, e.g. google:gemini-3.8-flash or ollama:qwen3", spellcheck: "false" });
    modelInputs[tier] = input;
    return field(`model-${tier}`, TIERS[tier] || tier, input);
  });
  const limitInputs = {};
  const limitField = ([key, value]) => {
    const [label, unit, min, max, step] = LIMITS[key] || [key, "", undefined, undefined, "any"];
    const input = h("input", { type: "number", value: value ?? "", min, max, step });
    limitInputs[key] = input;
    return field(`limit-${key}`, unit ? `${label} (${unit})` : label, input, MEMORY_HINTS[key]);
  };
  const limitEntries = Object.entries(s.limits || {});
  const limitFields = limitEntries.filter(([key]) => !MEMORY_LIMITS.has(key)).map(limitField);
  const memoryLimitFields = limitEntries.filter(([key]) => MEMORY_LIMITS.has(key)).map(limitField);
  const memoryInputs = {};
  const memoryFields = Object.entries(s.memory || {}).map(([key, value]) => {
    const input = typeof value === "boolean" ? h("input", { type: "checkbox", checked: value }) : h("input", { type: typeof value === "number" ? "number" : "text", value: value ?? "" });
    memoryInputs[key] = input;
    const [label, hint] = LONG_TERM_MEMORY[key] || [key.replaceAll("_", " ")];
    return field(`memory-${key}`, label, input, hint);
  });
  const keys = Object.entries(s.keys_present || {}).map(([provider, present]) =>
    h("li", h("span", provider), " ", h(`span.badge.${present ? "online" : "muted"}`, present ? "key set on the server" : "no key")),
  );

  const save = h("button.primary", { type: "submit", id: "save-settings" }, "Save");
  const form = h(
    "form.settings-form",
    {
      onsubmit: async (e) => {
        e.preventDefault();
        save.disabled = true;
        message.replaceChildren();
        const patch = { models: {}, limits: {} };
        // Only what changed is sent ("" clears a model), so other keys stay as written.
        for (const [tier, input] of Object.entries(modelInputs)) {
          if (input.value.trim() !== (s.models?.[tier] || "")) patch.models[tier] = input.value.trim();
        }
        for (const [key, input] of Object.entries(limitInputs)) {
          if (input.value !== "" && Number(input.value) !== s.limits?.[key]) patch.limits[key] = Number(input.value);
        }
        if (Object.keys(memoryInputs).length) {
          patch.memory = {};
          for (const [key, input] of Object.entries(memoryInputs)) patch.memory[key] = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value) : input.value;
        }
        try {
          const after = await api("/settings", { method: "PUT", body: patch });
          render(body, after);
          body.querySelector(".save-message").append(h("div.message.ok", { role: "status" }, `Saved to ${after.config_file}.`));
          loadStatus();
        } catch (err) {
          message.append(errorBox(err, "Not saved"));
          save.disabled = false;
        }
      },
    },
    h("section.card", h("h2", "Provider"), h("p", "Provider in use: ", h("strong", s.provider || "none (offline mode)")), h("p.muted", "The provider follows from the model strings below. Leave every model empty for offline mode."), h("h3", "API keys"), h("ul.keys", keys), h("p.muted", "Keys are read only from the server's environment or its config file; they are never shown or sent here.")),
    h("section.card", h("h2", "Model tiers"), h("div.fields", modelFields)),
    h("section.card", h("h2", "Limits"), h("div.fields.two", limitFields)),
    h("section.card", h("h2", "Memory"), memoryLimitFields.length || memoryFields.length ? h("div.fields.two", memoryLimitFields, memoryFields) : h("p.muted", "This server has no memory options.")),
    h("div.form-foot", save, h("span.muted", ` Config file: ${s.config_file}`), message),
  );
  setChildren(body, form);
}
