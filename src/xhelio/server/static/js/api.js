// One client for the REST API (docs/api.md, /api/v1): JSON in and out, errors as ApiError.
// The optional bearer token (XHELIO_API_TOKEN on the server) is kept in localStorage.

const BASE = "/api/v1";
const TOKEN_KEY = "xhelio.token";

/** An error answer of the API: `type` is the server's error class, `message` is for users. */
export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export function getToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** Headers every request carries (the token, when one is set). */
export function authHeaders(extra = {}) {
  const headers = { ...extra };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** Turn a non-2xx response into an ApiError with the server's readable message. */
export async function errorOf(response) {
  let type = `HTTP ${response.status}`;
  let message = response.statusText || "request failed";
  try {
    const body = await response.json();
    if (body && typeof body === "object") {
      type = body.type || type;
      message = body.message || (typeof body.detail === "string" ? body.detail : message);
      if (Array.isArray(body.detail)) message = body.detail.map((d) => d.msg).join("; ");
    }
  } catch {
    // Not JSON (a proxy page, a dropped connection): the status line is all there is.
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent("xhelio:unauthorized"));
  return new ApiError(response.status, type, message);
}

/**
 * Call the API and return the parsed JSON (null for 204).
 * @param {string} path route under /api/v1, e.g. "/sessions"
 * @param {{method?: string, body?: any, query?: Record<string, any>, signal?: AbortSignal}} opts
 */
export async function api(path, opts = {}) {
  const { method = "GET", body, query, signal } = opts;
  let url = BASE + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.set(k, v);
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  const headers = authHeaders(body === undefined ? {} : { "Content-Type": "application/json" });
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      signal,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, "ConnectionError", "The xhelio server cannot be reached. Is `xhelio serve` still running?");
  }
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return null;
  return response.json();
}

/** The URL of an API route (for links: downloads, exports). */
export function apiUrl(path, query) {
  const params = new URLSearchParams(query || {});
  const text = params.toString();
  return BASE + path + (text ? `?${text}` : "");
}

/**
 * Download a file route through fetch (so the token header goes along) and save it.
 * @returns {Promise<string>} the file name saved
 */
export async function download(path, query, fallbackName) {
  let response;
  try {
    response = await fetch(apiUrl(path, query), { headers: authHeaders() });
  } catch {
    throw new ApiError(0, "ConnectionError", "The xhelio server cannot be reached.");
  }
  if (!response.ok) throw await errorOf(response);
  const disposition = response.headers.get("Content-Disposition") || "";
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  const name = match ? decodeURIComponent(match[1]) : fallbackName;
  const blob = await response.blob();
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  return name;
}

export const sessionPath = (sid) => `/sessions/${encodeURIComponent(sid)}`;
