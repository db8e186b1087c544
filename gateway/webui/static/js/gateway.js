// The gateway protocol client: challenge → connect → hello-ok, requests
// with ids, events, and reconnecting with the backoff of seed 001.

import { signConnect } from "./identity.js";

/** Reconnect delays of seed 001, in milliseconds; the last one repeats. */
export const BACKOFF_MS = [800, 1600, 3200, 6400, 15000];

/** Scopes the page asks for; the gateway grants what the device holds. */
export const SCOPES = ["operator.admin", "operator.read", "operator.write", "operator.approvals", "operator.pairing"];

const CLIENT = { id: "webchat-ui", mode: "webchat", version: "1", platform: "web", displayName: "Switchboard web chat" };
const REQUEST_TIMEOUT_MS = 30000;

/** An error answered by the gateway: code, message, details. */
export class GatewayError extends Error {
  constructor(shape) {
    super(shape && shape.message ? shape.message : "request failed");
    this.code = shape && shape.code ? shape.code : "UNAVAILABLE";
    this.details = shape ? shape.details : undefined;
  }
}

/**
 * Gateway keeps one WebSocket to the gateway. States (the "state" event):
 * connecting, connected, reconnecting (with the delay), auth-failed (the
 * gateway refused the credentials: no retry until start() is called again),
 * pairing (waiting for an owner to approve this browser), stopped.
 */
export class Gateway extends EventTarget {
  constructor(opts) {
    super();
    this.url = opts.url;
    this.token = opts.token;
    this.deviceToken = opts.deviceToken || ""; // earned by a sign-in link
    this.loginCode = opts.loginCode || ""; // a one-time sign-in code, spent by the next connect
    this.identity = opts.identity; // may be null (no WebCrypto Ed25519)
    this.ws = null;
    this.pending = new Map();
    this.nextId = 1;
    this.attempt = 0;
    this.timer = 0;
    this.stopped = true;
    this.hello = null;
    this.state = "idle";
  }

  /** Connects now, forgetting earlier failures. */
  start(token) {
    if (token !== undefined) this.token = token;
    this.stopped = false;
    this.attempt = 0;
    clearTimeout(this.timer);
    this.#close();
    this.#connect();
  }

  /** Closes the connection and stops reconnecting. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.#close();
    this.#setState("stopped");
  }

  /** Sends a request; resolves with the payload, rejects with a GatewayError. */
  request(method, params) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || !this.hello) {
      return Promise.reject(new GatewayError({ code: "UNAVAILABLE", message: "not connected to the gateway" }));
    }
    return this.#send(ws, method, params);
  }

  #send(ws, method, params) {
    const id = "w" + this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new GatewayError({ code: "UNAVAILABLE", message: method + " timed out" }));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ type: "req", id, method, params: params || {} }));
    });
  }

  #setState(state, detail) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: Object.assign({ state }, detail || {}) }));
  }

  #close() {
    const ws = this.ws;
    this.ws = null;
    this.hello = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try { ws.close(1000, "client closed"); } catch (_) { /* already closed */ }
    }
    this.#failPending("connection closed");
  }

  #failPending(message) {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new GatewayError({ code: "UNAVAILABLE", message }));
      this.pending.delete(id);
    }
  }

  #connect() {
    this.#setState(this.attempt === 0 ? "connecting" : "reconnecting", { attempt: this.attempt });
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.#retry(String(err));
      return;
    }
    this.ws = ws;
    let refused = null; // the connect error, when the gateway refused us
    ws.onmessage = (msg) => {
      let frame;
      try { frame = JSON.parse(msg.data); } catch (_) { return; }
      if (frame.type === "event" && frame.event === "connect.challenge") {
        this.#handshake(ws, frame.payload && frame.payload.nonce).then((hello) => {
          if (ws !== this.ws) return;
          this.hello = hello;
          this.attempt = 0;
          this.#setState("connected", { hello });
        }, (err) => { refused = err; });
        return;
      }
      if (frame.type === "res") {
        const p = this.pending.get(frame.id);
        if (!p) return;
        this.pending.delete(frame.id);
        clearTimeout(p.timer);
        if (frame.ok) p.resolve(frame.payload); else p.reject(new GatewayError(frame.error));
        return;
      }
      if (frame.type === "event") {
        this.dispatchEvent(new CustomEvent("gateway-event", { detail: frame }));
      }
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.hello = null;
      this.#failPending("connection closed");
      if (this.stopped) return;
      if (refused) {
        this.#refused(refused);
        return;
      }
      if (ev.code === 4001) { // the gateway's secret was rotated
        this.stopped = true;
        this.#setState("auth-failed", { message: "The gateway token changed. Paste the new one." });
        return;
      }
      this.#retry(ev.reason || "connection closed (" + ev.code + ")");
    };
  }

  async #handshake(ws, nonce) {
    const params = {
      minProtocol: 3, maxProtocol: 4, client: CLIENT, role: "operator", scopes: SCOPES,
      caps: ["tool-events", "structured-stream"], locale: navigator.language || "en", userAgent: navigator.userAgent,
    };
    // One credential: a sign-in code once, else the pasted token, else the
    // device token a sign-in code earned.
    let signed = "";
    if (this.loginCode) {
      params.auth = { bootstrapToken: this.loginCode };
      signed = this.loginCode;
      this.loginCode = "";
    } else if (this.token) {
      params.auth = { token: this.token };
      signed = this.token;
    } else if (this.deviceToken) {
      params.auth = { deviceToken: this.deviceToken };
      signed = this.deviceToken;
    }
    if (this.identity && nonce) {
      params.device = await signConnect(this.identity, {
        clientId: CLIENT.id, clientMode: CLIENT.mode, role: params.role, scopes: SCOPES,
        token: signed, nonce, platform: CLIENT.platform, deviceFamily: "",
      });
    }
    const hello = await this.#send(ws, "connect", params);
    if (!this.token && hello && hello.auth && hello.auth.deviceToken) {
      this.deviceToken = hello.auth.deviceToken;
      this.dispatchEvent(new CustomEvent("device-token", { detail: this.deviceToken }));
    }
    return hello;
  }

  #refused(err) {
    const details = err.details || {};
    if (err.code === "NOT_PAIRED" || details.code === "PAIRING_REQUIRED") {
      // Wait for the owner to approve, then try again with the usual backoff.
      this.#setState("pairing", { message: err.message, requestId: details.requestId });
      this.#schedule();
      return;
    }
    if (err.code === "UNAVAILABLE") { // the gateway is starting: try again
      this.#retry(err.message);
      return;
    }
    this.stopped = true;
    this.#setState("auth-failed", { message: err.message, code: err.code });
  }

  #retry(reason) {
    this.#setState("reconnecting", { attempt: this.attempt, reason, delayMs: this.#delay() });
    this.#schedule();
  }

  #delay() {
    return BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
  }

  #schedule() {
    clearTimeout(this.timer);
    const delay = this.#delay();
    this.timer = setTimeout(() => {
      this.attempt++;
      if (!this.stopped) this.#connect();
    }, delay);
  }
}
