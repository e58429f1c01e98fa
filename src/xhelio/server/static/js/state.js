// Tab-wide state: the session this tab works in and the server's status.
// The session id lives in sessionStorage (one per tab, survives reload) and in the chat
// URL, so two tabs never share a session by accident and a reload restores it.

import { api } from "./api.js";

const SESSION_KEY = "xhelio.session";
const listeners = new Set();

export const state = {
  sessionId: sessionStorage.getItem(SESSION_KEY) || null,
  status: null, // GET /status
};

/** Subscribe to state changes; returns the unsubscribe function. */
export function onChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function notify(what) {
  for (const fn of listeners) fn(what);
}

/** Make `sid` this tab's session (null: none, the next request makes one). */
export function setSession(sid) {
  if (sid === state.sessionId) return;
  state.sessionId = sid;
  if (sid) sessionStorage.setItem(SESSION_KEY, sid);
  else sessionStorage.removeItem(SESSION_KEY);
  notify("session");
}

/** Tell the session list something changed (title, new turn, deletion). */
export function sessionsChanged() {
  notify("sessions");
}

/** The current session, creating one when the tab has none. */
export async function ensureSession(title) {
  if (state.sessionId) return state.sessionId;
  const info = await api("/sessions", { method: "POST", body: title ? { title } : {} });
  setSession(info.id);
  sessionsChanged();
  return info.id;
}

/** Load /status once (offline mode, models, implemented routes). */
export async function loadStatus() {
  try {
    state.status = await api("/status");
  } catch {
    state.status = null;
  }
  notify("status");
  return state.status;
}

/** Whether the server says it serves a route (from /status `implemented`). */
export function implemented(fragment) {
  const routes = state.status?.implemented || [];
  return routes.some((r) => String(r).includes(fragment));
}
