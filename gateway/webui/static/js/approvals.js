// Exec approvals where the user is (issue 26, finding 4): a command
// waiting for an operator shows on its tool card in the chat, whole, with
// Approve, Deny and a live countdown to its expiry; a request the page
// cannot match to a card shows at the end of the chat; the button that
// opens the side panel counts the waiting requests (at phone width the
// panel is closed). The side panel's list (panels.js) stays the overview
// of every session's requests.

import { paintToolState } from "./render.js";

const $ = (id) => document.getElementById(id);

/** TICK_MS is how often a countdown repaints. */
const TICK_MS = 500;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** countdownLabel is ms as m:ss, never below 0:00. */
export function countdownLabel(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

// What the card says once a request is answered.
const OUTCOME = {
  approved: "Approved.",
  denied: "Denied. The command did not run.",
  expired: "Expired: nobody answered in time, so the command was denied.",
  withdrawn: "Withdrawn: the run ended before an answer.",
  gone: "No longer waiting: answered elsewhere or expired.",
};

// outcomeOf maps an exec.approval.resolved payload to a card state.
function outcomeOf(r) {
  if (r.reason === "timeout") return "expired";
  if (r.reason === "aborted") return "withdrawn";
  return r.decision === "allow-once" || r.decision === "allow-always" ? "approved" : "denied";
}

/**
 * InlineApprovals keeps the pending exec approval requests (from
 * exec.approval.list and the exec.approval.* events) and shows those of
 * the shown session in its chat. The countdown runs on the page's clock,
 * corrected by the gateway's (tick events, request times); its one timer
 * runs only while a countdown is on the page.
 */
export class InlineApprovals {
  /**
   * gw is the Gateway; container the chat's message list; sameSession
   * tells whether a session key is the shown session's.
   */
  constructor(gw, container, sameSession) {
    this.gw = gw;
    this.container = container;
    this.sameSession = sameSession;
    this.enabled = false;
    this.items = new Map(); // id → {req, deadline, state, el, …}
    this.skewMs = 0; // gateway clock minus page clock
    this.timer = 0; // the countdown's interval, 0 when none runs
    this.shownCount = -1; // what the badge says
    this.seq = 0; // counts the events applied, to order them against a list
    this.answered = new Set(); // ids resolved lately: a list read before cannot revive them
  }

  /** Starts over after a (re)connect; enabled when the client may answer. */
  async show(enabled) {
    this.enabled = enabled;
    if (!enabled) {
      for (const id of [...this.items.keys()]) this.#drop(id);
      this.#update();
      return;
    }
    await this.load();
  }

  /** Reads the pending requests; those no longer listed were answered while away. */
  async load() {
    if (!this.enabled) return;
    const asked = this.seq;
    let res;
    try {
      res = await this.gw.request("exec.approval.list", {});
    } catch (_) {
      return; // exec is off (UNAVAILABLE) or the connection went: nothing waits here
    }
    const listed = new Set();
    for (const a of res.approvals || []) {
      listed.add(a.id);
      if (!this.answered.has(a.id)) this.#add(a, a.expiresAtMs - this.skewMs);
    }
    for (const it of this.items.values()) {
      // A request that arrived while the list was on its way is not in it.
      if (it.state === "pending" && !listed.has(it.id) && it.seq <= asked) this.#settle(it, "gone");
    }
    this.place();
  }

  /** Applies a gateway event: exec.approval.requested / resolved, tick. */
  onEvent(name, p) {
    switch (name) {
      case "tick":
        if (p && p.ts) this.skewMs = p.ts - Date.now();
        return;
      case "exec.approval.requested":
        if (!this.enabled || !p || !p.id) return;
        this.seq++;
        // Fresh: it expires its timeout from now, whatever the clocks say.
        this.#add(p, Date.now() + (p.expiresAtMs - p.createdAtMs));
        this.place();
        return;
      case "exec.approval.resolved": {
        if (!p || !p.id) return;
        this.seq++;
        this.answered.add(p.id);
        if (this.answered.size > 256) this.answered.delete(this.answered.values().next().value);
        const it = this.items.get(p.id);
        if (it) {
          it.resolvedBy = p.resolvedBy || "";
          this.#settle(it, outcomeOf(p));
          this.place();
        }
        return;
      }
    }
  }

  #add(a, deadline) {
    if (this.items.has(a.id)) return;
    this.items.set(a.id, { id: a.id, req: a.request || {}, deadline, state: "pending", el: null, seq: this.seq });
  }

  #drop(id) {
    const it = this.items.get(id);
    if (it && it.el) it.el.remove();
    this.items.delete(id);
  }

  /** Number of requests waiting, every session's. */
  pendingCount() {
    let n = 0;
    for (const it of this.items.values()) if (it.state === "pending") n++;
    return n;
  }

  /**
   * Puts each request of the shown session where it belongs: on its tool
   * card when the chat shows one, else at the end of the chat. Call it
   * after anything that (re)builds the chat: a history load, a live event.
   */
  place() {
    for (const [id, it] of this.items) {
      const ours = !it.req.sessionKey || this.sameSession(it.req.sessionKey);
      if (it.state !== "pending") {
        // An answered request stays on its card until the chat is
        // rebuilt (the history then shows the result); then it is done.
        if (!it.el || !it.el.isConnected || !ours) {
          this.#drop(id);
          continue;
        }
        const card = it.el.classList.contains("approval-loose") && this.#card(it.req.toolCallId);
        if (card) { // its card came after the answer
          this.#attach(it, card);
          card.dataset.approval = it.state;
          paintToolState(card);
        }
        continue;
      }
      if (!ours) {
        if (it.el) it.el.remove();
        continue;
      }
      if (!it.el) it.el = this.#build(it);
      const card = this.#card(it.req.toolCallId);
      if (card) {
        this.#attach(it, card);
        if (card.dataset.approval !== "pending") {
          card.dataset.approval = "pending";
          paintToolState(card);
        }
      } else {
        it.el.classList.add("approval-loose");
        if (it.el.parentNode !== this.container) this.container.append(it.el);
        it.card = null;
      }
    }
    this.#update();
  }

  // attach puts the request's element on card, under the card's head.
  #attach(it, card) {
    const head = card.querySelector(":scope > .tool-head");
    if (it.el.parentNode !== card || it.el.previousElementSibling !== head) head.after(it.el);
    it.el.classList.remove("approval-loose");
    it.card = card;
  }

  #card(toolCallId) {
    if (!toolCallId) return null;
    return this.container.querySelector('.block-toolCall[data-tool-call-id="' + CSS.escape(toolCallId) + '"]');
  }

  #build(it) {
    const r = it.req;
    const box = el("div", "approval");
    box.dataset.approvalId = it.id;
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", "Command waiting for your approval");
    const title = el("p", "approval-title", r.resolvedPath ? "Run this command?" : "Allow this tool call?");
    const cmd = el("pre", "approval-command", r.command || "");
    const meta = el("p", "approval-meta muted");
    const countdown = el("span", "approval-countdown");
    countdown.setAttribute("role", "timer");
    meta.append("Denied in ", countdown, " unless approved");
    // The variables the call itself sets are part of what is approved.
    const env = Object.entries(r.env || {}).map(([k, v]) => k + "=" + v).join(" ");
    if (env) meta.append(" · with " + env);
    if (r.cwd) meta.append(" · in " + r.cwd);
    const approve = el("button", "approval-approve", "Approve");
    approve.type = "button";
    const deny = el("button", "approval-deny danger", "Deny");
    deny.type = "button";
    const actions = el("div", "approval-actions");
    actions.append(approve, deny);
    const outcome = el("p", "approval-outcome");
    outcome.setAttribute("role", "status");
    outcome.hidden = true;
    box.append(title, cmd, meta, actions, outcome);
    Object.assign(it, { titleEl: title, countdownEl: countdown, metaEl: meta, actionsEl: actions, outcomeEl: outcome, buttons: [approve, deny] });
    approve.addEventListener("click", () => this.#answer(it, "allow-once"));
    deny.addEventListener("click", () => this.#answer(it, "deny"));
    this.#paintCountdown(it, Date.now());
    return box;
  }

  async #answer(it, decision) {
    if (it.state !== "pending") return;
    for (const b of it.buttons) b.disabled = true;
    try {
      await this.gw.request("exec.approval.resolve", { id: it.id, decision, commandHash: it.req.commandHash });
    } catch (err) {
      if (err.code === "APPROVAL_NOT_FOUND") {
        this.#settle(it, "gone");
      } else {
        for (const b of it.buttons) b.disabled = false;
        it.outcomeEl.hidden = false;
        it.outcomeEl.textContent = "Not answered: " + err.message;
      }
      this.place();
      return;
    }
    // The resolved event follows; settling now keeps the card honest if
    // the connection drops first.
    this.#settle(it, decision === "deny" ? "denied" : "approved");
    this.place();
  }

  // settle marks it answered: the question, buttons and countdown go; the
  // command and the outcome stay on the card.
  #settle(it, state) {
    if (it.state !== "pending") return;
    it.state = state;
    this.answered.add(it.id);
    if (it.el) {
      it.el.dataset.state = state;
      it.titleEl.remove();
      it.actionsEl.remove();
      it.metaEl.remove();
      it.outcomeEl.hidden = false;
      it.outcomeEl.textContent = OUTCOME[state] || state;
      it.el.setAttribute("aria-label", "Command approval: " + state);
    }
    const card = it.card && it.card.isConnected ? it.card : this.#card(it.req.toolCallId);
    if (card) {
      card.dataset.approval = state;
      paintToolState(card);
    }
  }

  #paintCountdown(it, now) {
    if (it.countdownEl) it.countdownEl.textContent = countdownLabel(it.deadline - now);
  }

  // update repaints the badge and runs the countdown timer only while a
  // countdown is on the page.
  #update() {
    const n = this.pendingCount();
    const ticking = [...this.items.values()].some((it) => it.state === "pending" && it.el && it.el.isConnected);
    if (n === this.shownCount && ticking === Boolean(this.timer)) return; // called on every live event: write only changes
    this.shownCount = n;
    const badge = $("approvals-count");
    badge.hidden = n === 0;
    badge.textContent = String(n);
    const label = n ? "Status panels: " + n + (n === 1 ? " command waits" : " commands wait") + " for approval" : "Status panels";
    $("toggle-panels").title = label;
    $("toggle-panels-label").textContent = label;
    if (ticking && !this.timer) {
      this.timer = setInterval(() => this.#tick(), TICK_MS);
    } else if (!ticking && this.timer) {
      clearInterval(this.timer);
      this.timer = 0;
    }
    this.container.toggleAttribute("data-approval-clock", ticking);
  }

  #tick() {
    const now = Date.now();
    let shown = false;
    for (const it of this.items.values()) {
      if (it.state === "pending" && it.el && it.el.isConnected) {
        this.#paintCountdown(it, now);
        shown = true;
      }
    }
    if (!shown) this.#update(); // the chat was rebuilt without them
  }
}
