// Server-sent events read from fetch() (so POST bodies and the bearer token work, which
// EventSource cannot do), with resumption: a dropped stream reconnects to the session's
// event route with Last-Event-ID and receives every event it missed.

import { apiUrl, authHeaders, errorOf, ApiError, sessionPath } from "./api.js";

/** Parse one SSE block ("id:", "event:", "data:" lines) into {id, type, data}. */
function parseBlock(block) {
  let id = null;
  let type = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue; // comments are keep-alive pings
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") id = Number(value);
    else if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length && type === "message") return null;
  let parsed = data.join("\n");
  try {
    parsed = JSON.parse(parsed);
  } catch {
    // Plain text data stays a string.
  }
  return { id, type, data: parsed };
}

/**
 * Read one SSE response to its end, calling onEvent for each event.
 * Throws ApiError for an error status; resolves when the server closes the stream.
 */
export async function readStream(url, { method = "GET", body, headers = {}, signal, onEvent }) {
  let response;
  try {
    response = await fetch(url, {
      method,
      signal,
      headers: authHeaders({ Accept: "text/event-stream", ...headers, ...(body ? { "Content-Type": "application/json" } : {}) }),
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, "ConnectionError", "The xhelio server cannot be reached.");
  }
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parseBlock(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event) onEvent(event);
    }
  }
  const tail = parseBlock(buffer.trim());
  if (tail) onEvent(tail);
}

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new DOMException("aborted", "AbortError"));
    });
  });

/**
 * A live run: the first stream (e.g. POST /ask/stream), continued after a drop by
 * following the session's events from the last id seen, until a `done` event arrives.
 *
 * @param {object} opts
 * @param {string} opts.url first stream's URL
 * @param {string} [opts.method]
 * @param {any} [opts.body]
 * @param {() => string|null} opts.sessionId the session to resume on (known after `session`)
 * @param {(event) => void} opts.onEvent every event, in order, each once
 * @param {(state: string, detail?: string) => void} [opts.onConnection]
 *   "live" | "reconnecting" | "lost" (gave up) | "resume_unavailable"
 * @param {AbortSignal} [opts.signal]
 * @param {number} [opts.retries] reconnection attempts before giving up
 */
export async function liveRun(opts) {
  const { onEvent, onConnection = () => {}, signal, retries = 6 } = opts;
  let lastId = null;
  let typesAtLast = new Set(); // a step's `figure` and `data` events share its id
  let finished = false;
  let reconnecting = false;
  const seen = (event) => {
    if (reconnecting) {
      reconnecting = false;
      onConnection("live");
    }
    if (event.id !== null && lastId !== null) {
      const replayed = event.id < lastId || (event.id === lastId && typesAtLast.has(event.type));
      if (replayed) return; // a resumed stream repeats what was already shown
    }
    if (event.id !== null) {
      if (event.id !== lastId) typesAtLast = new Set();
      lastId = event.id;
      typesAtLast.add(event.type);
    }
    if (event.type === "done") finished = true;
    onEvent(event);
  };
  let attempt = 0;
  let first = true;
  while (!finished) {
    try {
      if (first) {
        await readStream(opts.url, { method: opts.method, body: opts.body, signal, onEvent: seen });
      } else {
        const sid = opts.sessionId();
        const headers = lastId !== null ? { "Last-Event-ID": String(lastId) } : {};
        const query = { follow: "true", ...(lastId !== null ? { after: lastId } : {}) };
        await readStream(apiUrl(`${sessionPath(sid)}/events`, query), {
          headers,
          signal,
          onEvent: (event) => {
            if (event.type === "resume_unavailable") onConnection("resume_unavailable", event.data?.message);
            seen(event);
          },
        });
      }
      attempt = 0;
      if (!finished) throw new ApiError(0, "ConnectionError", "stream ended early");
    } catch (err) {
      if (err.name === "AbortError") throw err;
      // An answer from the server (4xx/5xx) is final; only lost connections are retried.
      if (err instanceof ApiError && err.status > 0) throw err;
      if (!opts.sessionId() || attempt >= retries) {
        onConnection("lost", err.message);
        throw new ApiError(0, "ConnectionLost", "The connection to the server was lost and could not be resumed. Reload the page to see the session as the server has it.");
      }
      attempt += 1;
      reconnecting = true;
      onConnection("reconnecting", `attempt ${attempt} of ${retries}`);
      await sleep(Math.min(500 * 2 ** (attempt - 1), 8000), signal);
    }
    first = false;
  }
}
