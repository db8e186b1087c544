// The web chat page: wires the gateway client, the conversation view and
// the control panels to the DOM of index.html.

import { Gateway } from "./gateway.js";
import { loadIdentity } from "./identity.js";
import { ChatView } from "./render.js";
import { Panels } from "./panels.js";
import { InlineApprovals } from "./approvals.js";

const TOKEN_KEY = "switchboard.gatewayToken";
const DEVICE_TOKEN_KEY = "switchboard.deviceToken";
const SESSION_KEY = "switchboard.sessionKey";

const $ = (id) => document.getElementById(id);

function newIdempotencyKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// KIND_LABELS names a session's chatKind for people.
const KIND_LABELS = { direct: "Direct message", group: "Group", channel: "Channel", webchat: "Web chat", cron: "Cron job", main: "Main session" };

// relativeTime says how long ago ms was: "just now", "5 min ago",
// "3 h ago", else the date.
function relativeTime(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  if (s < 86400) return Math.round(s / 3600) + " h ago";
  return new Date(ms).toLocaleDateString();
}

function debounce(fn, ms) {
  let t = 0;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

class App {
  constructor() {
    this.view = new ChatView($("messages"));
    this.sessionKey = localStorage.getItem(SESSION_KEY) || "";
    this.activeRun = null; // the current session's running run id
    this.reloadOnFinal = false;
    this.scopes = [];
    this.panels = null;
    this.refreshSessions = debounce(() => this.loadSessions(), 300);
    this.rows = new Map(); // session key → its sessions.list row
    this.viewing = ""; // the sessionId of an earlier transcript being read, or ""

    this.defaultModel = "";
  }

  async start() {
    this.identity = await loadIdentity();
    $("device-info").textContent = this.identity
      ? "Device " + this.identity.id.slice(0, 12) + "… (key kept in this browser)"
      : "No device identity (this browser has no WebCrypto Ed25519 here); connecting with the token only.";
    // The link `switchboard run` prints carries a one-time sign-in code in
    // the fragment, which the browser never sends to a server; it leaves
    // the address bar at once, so it is neither bookmarked nor shared.
    let loginCode = "";
    const m = /^#login=([A-Za-z0-9]{16,128})$/.exec(location.hash);
    if (m) {
      loginCode = m[1];
      history.replaceState(null, "", location.pathname + location.search);
    }
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    this.gw = new Gateway({
      url: scheme + location.host + "/", identity: this.identity, loginCode: this.identity ? loginCode : "",
      token: loginCode && this.identity ? "" : localStorage.getItem(TOKEN_KEY) || "",
      deviceToken: localStorage.getItem(DEVICE_TOKEN_KEY) || "",
    });
    this.panels = new Panels(this.gw);
    this.approvals = new InlineApprovals(this.gw, $("messages"), (key) => this.sameSession(key));
    this.gw.addEventListener("state", (e) => this.onState(e.detail));
    this.gw.addEventListener("gateway-event", (e) => this.onEvent(e.detail));
    this.gw.addEventListener("device-token", (e) => {
      localStorage.setItem(DEVICE_TOKEN_KEY, e.detail);
      localStorage.removeItem(TOKEN_KEY);
    });
    this.bindUI();
    if (loginCode && !this.identity) {
      this.showLogin("This browser cannot keep a device key here, so the sign-in link cannot work; paste the gateway token instead (`switchboard gateway token` prints it).");
    } else if (this.gw.loginCode || this.gw.token || this.gw.deviceToken) this.gw.start();
    else this.showLogin("");
  }

  bindUI() {
    $("login-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const token = $("token-input").value.trim();
      if (!token) return;
      localStorage.setItem(TOKEN_KEY, token);
      $("token-input").value = "";
      $("login-error").textContent = "";
      this.gw.start(token);
    });
    const input = $("composer-input");
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    $("composer").addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    $("abort-button").addEventListener("click", () => this.abort());
    $("session-search").addEventListener("input", () => this.refreshSessions());
    $("refresh-sessions").addEventListener("click", () => this.loadSessions());
    $("new-chat").addEventListener("click", () => this.newChat());
    $("earlier-select").addEventListener("change", (e) => this.viewEarlier(e.target.value));
    // Times in the session list stay true while the page is open.
    setInterval(() => {
      for (const t of document.querySelectorAll("[data-ts]")) t.textContent = relativeTime(Number(t.dataset.ts));
    }, 30000);
    $("forget-token").addEventListener("click", () => {
      localStorage.removeItem(TOKEN_KEY);
      localStorage.removeItem(DEVICE_TOKEN_KEY);
      this.gw.deviceToken = "";
      this.gw.stop();
      this.showLogin("Token forgotten. Paste a token to connect again.");
    });
    document.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      for (const [button, pane] of [["toggle-sessions", "sessions"], ["toggle-panels", "panels"]]) {
        if ($(pane).classList.contains("open")) {
          $(pane).classList.remove("open");
          $(button).setAttribute("aria-expanded", "false");
          $(button).focus();
        }
      }
    });
    for (const [button, pane] of [["toggle-sessions", "sessions"], ["toggle-panels", "panels"]]) {
      $(button).addEventListener("click", () => {
        const open = $(pane).classList.toggle("open");
        $(button).setAttribute("aria-expanded", String(open));
      });
    }
  }

  showLogin(message) {
    $("login").hidden = false;
    $("login-error").textContent = message || "";
    $("token-input").focus();
  }

  notice(text) {
    $("notice").textContent = text;
    $("notice").hidden = !text;
  }

  setConn(state, text) {
    const pill = $("conn-state");
    pill.dataset.state = state;
    pill.textContent = text;
  }

  setComposer(enabled) {
    $("composer-input").disabled = !enabled;
    $("send-button").disabled = !enabled;
    this.updateAbort();
  }

  updateAbort() {
    $("abort-button").disabled = !(this.gw && this.gw.hello && this.activeRun);
    $("run-state").textContent = this.activeRun ? "Replying…" : "";
  }

  onState(s) {
    switch (s.state) {
      case "connecting":
        this.setConn("connecting", "Connecting…");
        break;
      case "reconnecting":
        this.setConn("reconnecting", s.delayMs ? "Reconnecting in " + Math.round(s.delayMs / 100) / 10 + " s…" : "Reconnecting…");
        this.setComposer(false);
        break;
      case "connected":
        $("login").hidden = true;
        this.notice("");
        this.setConn("connected", "Connected");
        this.onHello(s.hello);
        break;
      case "pairing":
        this.setConn("pairing", "Waiting for approval");
        this.notice("This browser must be approved before it can chat: on the gateway's machine run `switchboard devices list`, then `switchboard devices approve <id>`" +
          (s.requestId ? " (request " + s.requestId + ")" : "") + ". The page retries by itself.");
        break;
      case "auth-failed":
        this.setConn("failed", "Not connected");
        this.setComposer(false);
        localStorage.removeItem(TOKEN_KEY);
        localStorage.removeItem(DEVICE_TOKEN_KEY);
        this.gw.deviceToken = "";
        // The gateway's message says what was wrong and where the token
        // comes from; the page adds only its other way in.
        this.showLogin("The gateway refused the connection: " + (s.message || "unauthorized") + ". Or open a new sign-in link: `switchboard run` logs one.");
        break;
      case "stopped":
        this.setConn("idle", "Not connected");
        this.setComposer(false);
        break;
    }
  }

  async onHello(hello) {
    this.scopes = (hello.auth && hello.auth.scopes) || [];
    const defaults = (hello.snapshot && hello.snapshot.sessionDefaults) || {};
    this.mainKey = defaults.mainSessionKey || "main";
    if (!this.sessionKey) this.sessionKey = this.mainKey;
    this.activeRun = null;
    this.setComposer(!this.viewing);
    this.panels.show(this.scopes, hello.features ? hello.features.methods : []);
    const mayApprove = this.scopes.includes("operator.approvals") || this.scopes.includes("operator.admin");
    // The gateway sends a session's live runs only to the clients showing
    // it (chat.history follows it); sessions.changed says when any other
    // session's run starts or ends, for the session list.
    this.gw.request("sessions.subscribe", {}).catch(() => {});
    await Promise.all([this.loadHistory(), this.loadSessions(), this.approvals.show(mayApprove)]);
    this.approvals.place();
  }

  /** Shows the current session's name, kind and model in the chat's head. */
  showHeading() {
    const row = this.rowOf(this.sessionKey);
    $("session-title").textContent = row ? row.displayName || row.key : this.sessionKey;
    $("session-title").title = this.sessionKey;
    const model = (row && row.model) || this.defaultModel;
    const surface = row && row.surface !== "webchat" ? row.surface : "";
    $("session-sub").textContent = [row && KIND_LABELS[row.chatKind], surface, model && "model " + model].filter(Boolean).join(" · ");
    // Earlier conversations of this session (before /new), newest first.
    const earlier = (row && row.earlier) || [];
    const select = $("earlier-select");
    select.hidden = earlier.length === 0;
    select.replaceChildren(new Option("Current conversation", ""), ...earlier.map((t) => new Option(
      "Earlier: " + (t.title || "untitled") + " (ended " + new Date(t.endedAt).toLocaleString() + ")", t.sessionId)));
    select.value = this.viewing;
  }

  /** Reads one of the session's earlier conversations ("" is the current one). */
  viewEarlier(sessionId) {
    this.viewing = sessionId;
    this.setComposer(!sessionId && !!this.gw.hello);
    this.notice(sessionId ? "You are reading an earlier conversation of this session; it is read only. Pick \u201cCurrent conversation\u201d to go on chatting." : "");
    this.loadHistory();
  }

  rowOf(key) {
    for (const [k, r] of this.rows) if (this.sameSessionKey(k, key)) return r;
    return null;
  }

  /** Starts a new web chat session (sessions.create) and shows it. */
  async newChat() {
    try {
      const res = await this.gw.request("sessions.create", {});
      await this.loadSessions();
      this.switchSession(res.key);
    } catch (err) {
      this.notice("Could not start a new chat: " + err.message);
    }
  }

  async loadHistory() {
    this.showHeading();
    try {
      const params = { sessionKey: this.sessionKey, limit: 200 };
      if (this.viewing) params.sessionId = this.viewing;
      const res = await this.gw.request("chat.history", params);
      this.view.renderHistory(res.messages || []);
    } catch (err) {
      this.view.clear();
      this.view.empty("Could not load the history: " + err.message);
    }
    this.approvals.place();
  }

  async loadToolResults() {
    try {
      const res = await this.gw.request("chat.history", { sessionKey: this.sessionKey, limit: 100 });
      this.view.fillToolResults(res.messages || []);
    } catch (_) {
      // The results stay hidden; a reload shows them.
    }
  }

  async loadSessions() {
    if (!this.gw.hello) return;
    const list = $("session-list");
    let res;
    try {
      res = await this.gw.request("sessions.list", { limit: 100, search: $("session-search").value.trim(), includeGlobal: true });
    } catch (err) {
      list.replaceChildren(Object.assign(document.createElement("li"), { className: "muted", textContent: err.message }));
      return;
    }
    const rows = res.sessions || [];
    this.defaultModel = (res.defaults && res.defaults.model) || this.defaultModel;
    if (!rows.some((r) => this.sameSessionKey(r.key, this.sessionKey)) && !$("session-search").value.trim()) {
      rows.unshift({ key: this.sessionKey, displayName: "New chat" });
    }
    this.rows = new Map(rows.map((r) => [r.key, r]));
    this.showHeading();
    list.replaceChildren(...rows.map((r) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "session";
      b.dataset.key = r.key;
      const name = document.createElement("span");
      name.className = "session-name";
      name.textContent = r.displayName || r.label || r.key;
      b.title = r.key;
      const meta = document.createElement("span");
      meta.className = "session-meta";
      meta.textContent = [KIND_LABELS[r.chatKind], r.surface && r.surface !== "webchat" ? r.surface : ""].filter(Boolean).join(" · ");
      if (r.updatedAt) {
        const when = document.createElement("time");
        when.dataset.ts = r.updatedAt;
        when.dateTime = new Date(r.updatedAt).toISOString();
        when.textContent = relativeTime(r.updatedAt);
        meta.append(meta.textContent ? " · " : "", when);
      }
      b.append(name, meta);
      if (this.sameSessionKey(r.key, this.sessionKey)) b.setAttribute("aria-current", "true");
      b.addEventListener("click", () => this.switchSession(r.key));
      li.append(b);
      return li;
    }));
  }

  switchSession(key) {
    if (key === this.sessionKey) return;
    if (this.gw.hello && this.sessionKey) {
      this.gw.request("sessions.messages.unsubscribe", { key: this.sessionKey }).catch(() => {});
    }
    this.sessionKey = key;
    localStorage.setItem(SESSION_KEY, key);
    if (this.viewing) {
      this.viewing = "";
      this.notice("");
      this.setComposer(!!this.gw.hello);
    }
    this.activeRun = null;
    this.updateAbort();
    $("sessions").classList.remove("open");
    for (const b of document.querySelectorAll(".session")) {
      if (this.sameSessionKey(b.dataset.key, key)) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
    }
    this.loadHistory();
  }

  // sameSession compares a payload's session key with the current one;
  // the gateway may answer with the canonical form ("agent:main:main" for
  // "main").
  sameSession(key) {
    return this.sameSessionKey(key, this.sessionKey);
  }

  sameSessionKey(a, b) {
    if (!a || !b) return false;
    if (a === b) return true;
    const canon = (k) => (k.startsWith("agent:") ? k : "agent:main:" + k);
    return canon(a) === canon(b);
  }

  async send() {
    const input = $("composer-input");
    const text = input.value;
    if (!text.trim() || !this.gw.hello) return;
    input.value = "";
    const bubble = this.view.addUser(text);
    this.sending = true; // the next run start is this message's
    if (/^\/(new|reset)\b/i.test(text.trim())) this.reloadOnFinal = true;
    try {
      await this.gw.request("chat.send", { sessionKey: this.sessionKey, message: text, idempotencyKey: newIdempotencyKey() });
    } catch (err) {
      bubble.dataset.state = "failed";
      const e = document.createElement("div");
      e.className = "inline-error";
      e.setAttribute("role", "alert");
      e.textContent = "Not sent: " + err.message;
      bubble.append(e);
      if (!input.value) input.value = text;
    }
  }

  async abort() {
    try {
      await this.gw.request("chat.abort", { sessionKey: this.sessionKey });
    } catch (err) {
      $("run-state").textContent = "Could not stop: " + err.message;
    }
  }

  onEvent(frame) {
    const p = frame.payload || {};
    switch (frame.event) {
      case "agent":
        if (!this.sameSession(p.sessionKey) || this.viewing) return;
        if (p.stream === "lifecycle" && p.data && p.data.phase === "start") {
          this.activeRun = p.runId;
          this.updateAbort();
          // A run this page did not start (a heartbeat, a cron job, another
          // client) shows its prompt, as a system note or the other
          // client's words, once history is reloaded at its end.
          if (!this.sending) this.reloadOnFinal = true;
          this.sending = false;
        }
        this.view.agentEvent(p);
        this.approvals.place(); // a tool card may have appeared
        break;
      case "chat":
        if (!this.sameSession(p.sessionKey) || this.viewing) {
          if (p.state !== "delta") this.refreshSessions();
          return;
        }
        this.view.chatEvent(p, this.activeRun);
        if (p.state !== "delta") {
          this.activeRun = null;
          this.updateAbort();
          this.refreshSessions();
          if (this.reloadOnFinal) {
            this.reloadOnFinal = false;
            this.loadHistory();
          } else if (this.view.missingResults().length) {
            this.loadToolResults();
          }
        }
        break;
      case "sessions.changed":
        this.refreshSessions();
        break;
      case "shutdown":
        this.setConn("reconnecting", "Gateway restarting…");
        break;
      case "exec.approval.requested":
      case "exec.approval.resolved":
        this.approvals.onEvent(frame.event, p);
        this.panels.onEvent(frame.event, p);
        break;
      case "tick":
        this.approvals.onEvent(frame.event, p);
        break;
      default:
        this.panels.onEvent(frame.event, p);
    }
  }
}

new App().start();
