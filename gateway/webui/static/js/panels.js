// The control panels: channel status, the last heartbeat, cron jobs (run
// now), exec approval requests (approve / deny) for clients that hold the
// approvals scope, and device pairing requests (approve / reject) for
// clients that hold the pairing scope.

const $ = (id) => document.getElementById(id);

function li(text, cls) {
  const e = document.createElement("li");
  if (cls) e.className = cls;
  e.textContent = text;
  return e;
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "never";
}

function has(scopes, scope) {
  return scopes.includes(scope) || scopes.includes("operator.admin");
}

// The words a channel's state is shown in; data-state keeps the id.
const STATE_WORDS = {
  starting: "starting", connected: "connected", "transient-disconnect": "reconnecting",
  conflict: "in use elsewhere", "bad-credentials": "token refused", "logged-out": "logged out",
  failed: "failed", stopped: "stopped", standby: "standby",
};

/** retryText says when a channel's next attempt is: "retrying in 20 s". */
function retryText(at) {
  const s = Math.round((at - Date.now()) / 1000);
  if (s <= 0) return "retrying now";
  if (s < 90) return "retrying in " + s + " s";
  return "retrying in " + Math.round(s / 60) + " min";
}

/**
 * channelRow is one bridge account: its name and state, and while it is
 * not connected, what went wrong in a few words (lastErrorSummary), when it
 * tries again, and the whole error folded beneath.
 */
function channelRow(label, ch, acc) {
  const row = document.createElement("li");
  row.className = "channel";
  row.dataset.channel = ch;
  row.dataset.state = acc.state || "unknown";
  const name = document.createElement("strong");
  name.textContent = label;
  const state = document.createElement("span");
  state.className = "badge";
  state.textContent = STATE_WORDS[acc.state] || acc.state || "unknown";
  state.title = acc.state || "";
  row.append(name, " ", state);
  if (acc.accountId && acc.accountId !== "default") row.append(" ", acc.accountId);
  const down = acc.state !== "connected";
  if (down && (acc.lastErrorSummary || acc.lastError || acc.retryAt)) {
    const problem = document.createElement("div");
    problem.className = "channel-problem";
    if (acc.lastErrorSummary || acc.lastError) {
      const summary = document.createElement("span");
      summary.className = "channel-summary error";
      summary.textContent = acc.lastErrorSummary || acc.lastError;
      problem.append(summary);
    }
    if (acc.retryAt) {
      const retry = document.createElement("span");
      retry.className = "channel-retry muted";
      retry.dataset.retryAt = String(acc.retryAt);
      retry.title = "at " + new Date(acc.retryAt).toLocaleTimeString();
      retry.textContent = retryText(acc.retryAt);
      problem.append(problem.childNodes.length ? " · " : "", retry);
    }
    row.append(problem);
    if (acc.lastError && acc.lastErrorSummary && acc.lastError !== acc.lastErrorSummary) {
      const details = document.createElement("details");
      details.className = "channel-detail";
      const fold = document.createElement("summary");
      fold.textContent = "Details";
      const text = document.createElement("div");
      text.className = "channel-error";
      text.textContent = acc.lastError;
      details.append(fold, text);
      row.append(details);
    }
  }
  return row;
}

/** Panels fills the status side panel from gateway requests and events. */
export class Panels {
  constructor(gw) {
    this.gw = gw;
    this.scopes = [];
  }

  /** Loads every panel after a (re)connect. */
  show(scopes, methods) {
    this.scopes = scopes || [];
    this.methods = new Set(methods || []);
    $("pairing-panel").hidden = !has(this.scopes, "operator.pairing");
    this.approvals = has(this.scopes, "operator.approvals");
    $("approvals-panel").hidden = true; // shown once exec turns out to be on
    this.loadChannels();
    this.loadHeartbeat();
    this.loadCron();
    if (!$("pairing-panel").hidden) this.loadPairing();
    if (this.approvals) this.loadApprovals();
  }

  onEvent(name, payload) {
    switch (name) {
      case "heartbeat":
        this.renderHeartbeat(payload);
        break;
      case "cron":
        this.loadCron();
        break;
      case "exec.approval.requested":
      case "exec.approval.resolved":
        if (this.approvals) this.loadApprovals();
        break;
      case "device.pair.requested":
      case "device.pair.resolved":
        if (!$("pairing-panel").hidden) this.loadPairing();
        break;
      case "health":
        this.loadChannels();
        break;
    }
  }

  async call(method, params, target) {
    try {
      return await this.gw.request(method, params || {});
    } catch (err) {
      const msg = err.code === "UNAVAILABLE" ? "Not available: " + err.message : err.message;
      if (target.tagName === "UL") target.replaceChildren(li(msg, "muted"));
      else target.textContent = msg;
      return undefined; // a result may itself be null (no heartbeat yet)
    }
  }

  async loadChannels() {
    const list = $("channels");
    const res = await this.call("channels.status", {}, list);
    if (!res) return;
    // A reload (every health event) keeps the details the reader opened.
    const open = new Set([...list.querySelectorAll(".channel-detail[open]")].map((d) => d.closest(".channel").dataset.key));
    const rows = [];
    for (const ch of res.channelOrder || []) {
      for (const acc of (res.channelAccounts || {})[ch] || []) {
        const row = channelRow((res.channelLabels || {})[ch] || ch, ch, acc);
        row.dataset.key = ch + ":" + (acc.accountId || "");
        const details = row.querySelector(".channel-detail");
        if (details && open.has(row.dataset.key)) details.open = true;
        rows.push(row);
      }
    }
    list.replaceChildren(...(rows.length ? rows : [li("No chat platforms configured; this page is the only way in.", "muted")]));
    this.tickRetries();
  }

  /**
   * Counts down each channel's "retrying in …" once a second while one is
   * due, and asks again a little after an attempt was due, for how it went.
   */
  tickRetries() {
    clearInterval(this.retryTimer);
    const update = () => {
      const due = [...document.querySelectorAll("#channels .channel-retry[data-retry-at]")];
      for (const e of due) e.textContent = retryText(Number(e.dataset.retryAt));
      if (!due.length) clearInterval(this.retryTimer);
      else if (due.some((e) => Date.now() - Number(e.dataset.retryAt) > 2000)) {
        clearInterval(this.retryTimer);
        this.loadChannels();
      }
    };
    update();
    this.retryTimer = setInterval(update, 1000);
  }

  async loadHeartbeat() {
    const res = await this.call("last-heartbeat", {}, $("heartbeat"));
    if (res !== undefined) this.renderHeartbeat(res);
  }

  renderHeartbeat(hb) {
    const p = $("heartbeat");
    if (!hb || !hb.ts) {
      p.textContent = "No heartbeat has run yet.";
      return;
    }
    const parts = [hb.status || "unknown", "at " + when(hb.ts)];
    if (hb.reason) parts.push("(" + hb.reason + ")");
    if (hb.to) parts.push("to " + hb.to);
    if (hb.preview) parts.push("— " + hb.preview);
    p.textContent = parts.join(" ");
    p.dataset.status = hb.status || "";
  }

  async loadCron() {
    const list = $("cron");
    const res = await this.call("cron.list", { includeDisabled: true }, list);
    if (!res) return;
    const jobs = res.jobs || [];
    if (!jobs.length) {
      list.replaceChildren(li("No cron jobs.", "muted"));
      return;
    }
    list.replaceChildren(...jobs.map((job) => this.cronRow(job)));
  }

  /**
   * One cron job: its next and last run, why the last run failed or its
   * answer went nowhere, and Run now. Running a disabled job, or a
   * one-shot job that the run deletes, first asks, saying what happens to
   * the job (issue 26, finding 6: "Run now" deleted a disabled example).
   */
  cronRow(job) {
    const label = job.name || job.id;
    const st = job.state || {};
    const disabled = job.enabled === false;
    const oneShot = !disabled && (job.deleteAfterRun ?? (job.schedule || {}).kind === "at");
    const row = document.createElement("li");
    row.className = "cron-job";
    row.dataset.id = job.id;
    const name = document.createElement("strong");
    name.textContent = label;
    const info = document.createElement("div");
    info.className = "muted cron-info";
    info.textContent = (disabled ? "disabled · " : "") + "next " + when(st.nextRunAtMs) + " · last " + (st.lastStatus || "—");
    const problem = document.createElement("div");
    problem.className = "error cron-problem";
    if (st.lastStatus === "error") {
      problem.textContent = "Last run failed: " + (st.lastError || "no reason recorded");
    } else if (st.lastDeliveryStatus === "not-delivered" && st.lastDeliveryError) {
      problem.textContent = "Answer not delivered: " + st.lastDeliveryError;
    }
    problem.hidden = !problem.textContent;
    const note = document.createElement("div");
    note.className = "muted cron-note";
    note.textContent = (this.cronNotes || {})[job.id] || "";
    note.hidden = !note.textContent;

    const run = document.createElement("button");
    run.type = "button";
    run.textContent = "Run now";
    run.setAttribute("aria-label", "Run " + label + " now");
    const ask = document.createElement("div");
    ask.className = "cron-confirm";
    ask.hidden = true;
    ask.setAttribute("role", "group");
    ask.setAttribute("aria-label", "Confirm running " + label);
    const question = document.createElement("p");
    question.textContent = disabled
      ? "“" + label + "” is disabled. Run it once now? It stays disabled and is not deleted."
      : "“" + label + "” runs only once: it is deleted when this run succeeds. Run it now?";
    const yes = document.createElement("button");
    yes.type = "button";
    yes.textContent = "Run once";
    const no = document.createElement("button");
    no.type = "button";
    no.textContent = "Cancel";
    ask.append(question, yes, " ", no);

    const settle = (text) => {
      this.cronNotes = { ...this.cronNotes, [job.id]: text };
      note.textContent = text;
      note.hidden = !text;
    };
    const start = async () => {
      ask.hidden = true;
      run.hidden = false;
      run.disabled = true;
      const res = await this.call("cron.run", { id: job.id, mode: "force" }, note);
      run.disabled = false;
      note.hidden = !note.textContent;
      if (!res) return;
      if (!res.ran) settle("Nothing ran; the job changed meanwhile. Try again.");
      else if (res.disabled) settle("Started; the job stays disabled.");
      else if (res.deletesJob) settle("Started; the job is deleted when this run succeeds.");
      else settle("Started.");
    };
    run.addEventListener("click", () => {
      if (!disabled && !oneShot) {
        start();
        return;
      }
      ask.hidden = false;
      run.hidden = true;
      yes.focus();
    });
    yes.addEventListener("click", start);
    no.addEventListener("click", () => {
      ask.hidden = true;
      run.hidden = false;
      run.focus();
    });
    row.append(name, " ", run, info, problem, note, ask);
    return row;
  }

  async loadPairing() {
    const list = $("pairing");
    const res = await this.call("device.pair.list", {}, list);
    if (!res) return;
    const pending = res.pending || [];
    if (!pending.length) {
      list.replaceChildren(li("No pending requests.", "muted"));
      return;
    }
    list.replaceChildren(...pending.map((r) => {
      const row = document.createElement("li");
      row.className = "pairing-request";
      const name = document.createElement("strong");
      name.textContent = r.displayName || r.clientId || r.deviceId;
      const info = document.createElement("div");
      info.className = "muted";
      info.textContent = [r.platform, r.remoteIp, (r.scopes || []).join(", ")].filter(Boolean).join(" · ");
      const approve = document.createElement("button");
      approve.type = "button";
      approve.textContent = "Approve";
      approve.setAttribute("aria-label", "Approve " + name.textContent);
      const reject = document.createElement("button");
      reject.type = "button";
      reject.className = "danger";
      reject.textContent = "Reject";
      reject.setAttribute("aria-label", "Reject " + name.textContent);
      approve.addEventListener("click", async () => {
        if (await this.call("device.pair.approve", { requestId: r.requestId }, info)) this.loadPairing();
      });
      reject.addEventListener("click", async () => {
        if (await this.call("device.pair.reject", { requestId: r.requestId }, info)) this.loadPairing();
      });
      row.append(name, " ", approve, " ", reject, info);
      return row;
    }));
  }

  /**
   * Lists the commands waiting for approval, each shown whole (never cut:
   * what is approved is what runs) with its working directory, length and
   * hash. Approve answers allow-once bound to that hash; the panel stays
   * hidden while exec is off.
   */
  async loadApprovals() {
    const list = $("approvals");
    let res;
    try {
      res = await this.gw.request("exec.approval.list", {});
    } catch (err) {
      $("approvals-panel").hidden = err.code === "UNAVAILABLE";
      list.replaceChildren(li(err.message, "muted"));
      return;
    }
    $("approvals-panel").hidden = false;
    const pending = res.approvals || [];
    if (!pending.length) {
      list.replaceChildren(li("No commands waiting.", "muted"));
      return;
    }
    list.replaceChildren(...pending.map((a) => {
      const r = a.request || {};
      const row = document.createElement("li");
      row.className = "approval-request";
      row.dataset.id = a.id;
      const cmd = document.createElement("pre");
      cmd.className = "approval-command";
      cmd.textContent = r.command;
      const info = document.createElement("div");
      info.className = "muted";
      info.textContent = ["in " + r.cwd, r.commandLength + " bytes", "hash " + (r.commandHash || "").slice(0, 16),
        r.sessionKey, "expires " + when(a.expiresAtMs)].filter(Boolean).join(" · ");
      const approve = document.createElement("button");
      approve.type = "button";
      approve.textContent = "Approve once";
      const deny = document.createElement("button");
      deny.type = "button";
      deny.className = "danger";
      deny.textContent = "Deny";
      const answer = (decision) => async () => {
        approve.disabled = deny.disabled = true;
        const ok = await this.call("exec.approval.resolve", { id: a.id, decision, commandHash: r.commandHash }, info);
        if (ok) this.loadApprovals();
        else approve.disabled = deny.disabled = false;
      };
      approve.addEventListener("click", answer("allow-once"));
      deny.addEventListener("click", answer("deny"));
      row.append(cmd, approve, " ", deny, info);
      return row;
    }));
  }
}
