// The conversation view: history from chat.history and live runs from the
// gateway's agent and chat events, rendered as seed 003 recommends: one
// bubble per model response (messageId), its content blocks in index
// order, a cursor on the block still streaming, thinking collapsible, tool
// calls with name, arguments and executing / done / failed state (or the
// approval they wait for, which approvals.js puts on the card), errors
// inline. All text goes through renderMarkdown or textContent.

import { renderMarkdown } from "./markdown.js";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// The label of a system note, by the provenance's source.
const SYSTEM_NOTE_LABELS = {
  reset: "New session started",
  heartbeat: "Heartbeat check-in",
  cron: "Scheduled job",
  system: "System message",
};

function timeLabel(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// textOf returns the text of a message's content (a string or blocks).
export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text").map((b) => b.text || "").join("\n");
}

function pretty(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch (_) { return value; }
  }
  try { return JSON.stringify(value, null, 2); } catch (_) { return String(value); }
}

// resultText is the text of a tool result ({content:[…]} or a string).
function resultText(result) {
  if (result === undefined || result === null) return "";
  if (typeof result === "string") return result;
  if (Array.isArray(result.content)) {
    return result.content.map((b) => (b.type === "text" ? b.text : "[" + b.type + "]")).join("\n");
  }
  return pretty(result);
}

const TOOL_STATE_LABEL = { pending: "waiting", executing: "executing…", done: "done", failed: "failed" };

// What a tool card whose call asked for an operator's approval says
// (data-approval, set by approvals.js), while it waits and once answered.
const APPROVAL_LABEL = {
  pending: "waiting for your approval", approved: "approved · running…",
  denied: "denied", expired: "expired · denied", withdrawn: "stopped", gone: "no longer waiting",
};

/**
 * toolStateLabel is what a tool card's state line says: its run state,
 * unless the call waits for (or was refused) an approval.
 */
export function toolStateLabel(card) {
  const state = card.dataset.state;
  const approval = card.dataset.approval;
  const ended = state === "done" || state === "failed";
  if (approval && APPROVAL_LABEL[approval] && !(ended && (approval === "approved" || approval === "pending" || approval === "gone"))) {
    return APPROVAL_LABEL[approval];
  }
  return TOOL_STATE_LABEL[state] || state;
}

/** paintToolState repaints a tool card's state line from its data. */
export function paintToolState(card) {
  const label = card.querySelector(":scope > .tool-head > .tool-state");
  if (label) label.textContent = toolStateLabel(card);
}

/** Block is one content block of a bubble. */
class Block {
  constructor(type, index) {
    this.type = type;
    this.index = index;
    this.text = "";
    this.streaming = false;
    this.el = el("div", "block block-" + type);
    this.el.dataset.index = String(index);
    if (type === "thinking") {
      this.details = el("details", "thinking");
      this.summary = el("summary", "", "Thinking");
      this.body = el("div", "thinking-body");
      this.details.append(this.summary, this.body);
      this.el.append(this.details);
    } else if (type === "toolCall") {
      this.el.dataset.state = "pending";
      this.head = el("div", "tool-head");
      this.nameEl = el("span", "tool-name");
      this.stateEl = el("span", "tool-state", TOOL_STATE_LABEL.pending);
      this.head.append(el("span", "tool-icon", "Tool"), this.nameEl, this.stateEl);
      this.argsEl = el("pre", "tool-args");
      this.resultEl = el("pre", "tool-result");
      this.resultEl.hidden = true;
      const det = el("details", "tool-details");
      const sum = el("summary", "", "Arguments and result");
      det.append(sum, this.argsEl, this.resultEl);
      this.detailsEl = det;
      this.el.append(this.head, det);
      this.args = "";
    } else {
      this.body = el("div", "text-body");
      this.el.append(this.body);
    }
  }

  setText(text) {
    this.text = text;
    this.#paint();
  }

  setStreaming(on) {
    this.streaming = on;
    this.el.classList.toggle("streaming", on);
    this.#paint();
  }

  #paint() {
    if (this.type === "toolCall") return;
    const body = this.body;
    body.replaceChildren(this.type === "thinking" ? document.createTextNode(this.text) : renderMarkdown(this.text));
    if (this.streaming) {
      const cursor = el("span", "cursor", "▍");
      cursor.setAttribute("aria-hidden", "true");
      const last = body.lastElementChild && this.type !== "thinking" ? body.lastElementChild : body;
      (last.tagName === "PRE" ? body : last).append(cursor);
    }
  }

  setTool(name, id) {
    if (name) this.nameEl.textContent = name;
    if (id) this.el.dataset.toolCallId = id;
  }

  setArgs(args) {
    this.args = typeof args === "string" ? args : pretty(args);
    this.argsEl.textContent = pretty(this.args);
  }

  setToolState(state, result) {
    this.el.dataset.state = state;
    this.stateEl.textContent = toolStateLabel(this.el);
    if (result !== undefined) {
      this.resultEl.hidden = false;
      this.resultEl.textContent = resultText(result);
      // The user answered an approval on this card: show what came of it.
      if (this.el.dataset.approval) this.detailsEl.open = true;
    }
  }
}

/** Bubble is one model response (or one user message). */
class Bubble {
  constructor(role, id) {
    this.role = role;
    this.id = id;
    this.blocks = new Map();
    this.el = el("article", "bubble bubble-" + role);
    if (id) this.el.dataset.messageId = id;
    this.el.setAttribute("aria-label", role === "user" ? "You" : "Assistant");
    this.content = el("div", "bubble-content");
    this.meta = el("div", "bubble-meta");
    this.el.append(this.content, this.meta);
  }

  // block returns the block at index, creating it in index order.
  block(index, type) {
    let b = this.blocks.get(index);
    if (b) return b;
    b = new Block(type, index);
    this.blocks.set(index, b);
    let before = null;
    for (const other of this.blocks.values()) {
      if (other.index > index && (!before || other.index < before.index)) before = other;
    }
    this.content.insertBefore(b.el, before ? before.el : null);
    return b;
  }

  toolBlock(id) {
    for (const b of this.blocks.values()) if (b.type === "toolCall" && b.el.dataset.toolCallId === id) return b;
    return null;
  }

  nextIndex() {
    let max = -1;
    for (const i of this.blocks.keys()) max = Math.max(max, i);
    return max + 1;
  }

  error(message) {
    if (this.content.querySelector(".inline-error")) return; // one error per response
    const e = el("div", "inline-error", message);
    e.setAttribute("role", "alert");
    this.content.append(e);
  }

  done() {
    for (const b of this.blocks.values()) if (b.streaming) b.setStreaming(false);
    this.el.classList.remove("live");
  }
}

/** ChatView renders one session's conversation into a container. */
export class ChatView {
  constructor(container) {
    this.container = container;
    this.runs = new Map(); // runId → {el, bubbles: Map messageId → Bubble, ended}
    this.pendingTools = new Map(); // toolCallId → Block (history)
  }

  clear() {
    this.container.replaceChildren();
    this.runs.clear();
    this.pendingTools.clear();
  }

  #stickToBottom(fn) {
    const c = this.container;
    const atBottom = c.scrollHeight - c.scrollTop - c.clientHeight < 80;
    fn();
    if (atBottom) c.scrollTop = c.scrollHeight;
  }

  empty(text) {
    this.container.append(el("p", "empty muted", text));
  }

  /** Renders chat.history's messages (core.Message JSON). */
  renderHistory(messages) {
    this.clear();
    if (!messages.length) {
      this.empty("No messages yet. Say hello.");
      return;
    }
    this.#stickToBottom(() => {
      for (const m of messages) this.#historyMessage(m);
    });
    this.container.scrollTop = this.container.scrollHeight;
  }

  #historyMessage(m) {
    if (!m || typeof m !== "object") return;
    if (m.role === "user") {
      if (m.provenance && m.provenance.kind && m.provenance.kind !== "external_user") {
        this.addSystemNote(m.provenance, textOf(m.content), m.timestamp);
      } else {
        this.addUser(textOf(m.content), m.timestamp);
      }
      return;
    }
    if (m.role === "toolResult") {
      const b = this.pendingTools.get(m.toolCallId);
      if (b) b.setToolState(m.isError ? "failed" : "done", { content: m.content });
      return;
    }
    if (m.role !== "assistant") return;
    const bubble = new Bubble("assistant");
    const content = Array.isArray(m.content) ? m.content : [{ type: "text", text: String(m.content || "") }];
    content.forEach((c, i) => {
      if (!c) return;
      if (c.type === "text") {
        if (c.text) bubble.block(i, "text").setText(c.text);
      } else if (c.type === "thinking") {
        bubble.block(i, "thinking").setText(c.thinking || "");
      } else if (c.type === "toolCall") {
        const b = bubble.block(i, "toolCall");
        b.setTool(c.name, c.id);
        b.setArgs(c.arguments || {});
        this.pendingTools.set(c.id, b);
      }
    });
    if (m.stopReason === "error" || m.stopReason === "aborted") {
      bubble.error(m.errorMessage || (m.stopReason === "aborted" ? "Stopped." : "The model failed."));
    }
    bubble.meta.textContent = timeLabel(m.timestamp);
    if (bubble.blocks.size || bubble.content.childElementCount) this.container.append(bubble.el);
  }

  /** Adds the user's message; returns the bubble's element. */
  addUser(text, ts) {
    const empty = this.container.querySelector(".empty");
    if (empty) empty.remove();
    const bubble = new Bubble("user");
    bubble.block(0, "text").setText(text);
    bubble.meta.textContent = timeLabel(ts || Date.now());
    this.#stickToBottom(() => this.container.append(bubble.el));
    return bubble.el;
  }

  /**
   * Shows a prompt Switchboard wrote (the /new prompt, a heartbeat poll, a
   * cron job's prompt) as a small system note, never as the user's words;
   * the prompt itself folds out under it.
   */
  addSystemNote(provenance, text, ts) {
    const empty = this.container.querySelector(".empty");
    if (empty) empty.remove();
    const note = el("details", "system-note");
    note.dataset.source = provenance.source || provenance.kind;
    const summary = el("summary");
    summary.append(el("span", "system-note-label", SYSTEM_NOTE_LABELS[provenance.source] || "System message"),
      el("span", "system-note-time", timeLabel(ts || Date.now())));
    const body = el("div", "system-note-text", text);
    note.append(summary, body);
    this.#stickToBottom(() => this.container.append(note));
    return note;
  }

  #run(runId) {
    let run = this.runs.get(runId);
    if (!run) {
      const empty = this.container.querySelector(".empty");
      if (empty) empty.remove();
      run = { el: el("div", "run live"), bubbles: new Map(), ended: false, last: null };
      run.el.dataset.runId = runId;
      this.runs.set(runId, run);
      this.#stickToBottom(() => this.container.append(run.el));
    }
    return run;
  }

  #bubble(run, messageId) {
    const id = messageId || "reply";
    let b = run.bubbles.get(id);
    if (!b) {
      b = new Bubble("assistant", id);
      b.el.classList.add("live");
      run.bubbles.set(id, b);
      run.el.append(b.el);
    }
    run.last = b;
    return b;
  }

  /** Applies an agent event's payload ({runId, stream, data}). */
  agentEvent(ev) {
    const d = ev.data || {};
    this.#stickToBottom(() => this.#agent(ev.runId, ev.stream, d));
  }

  #agent(runId, stream, d) {
    const run = this.#run(runId);
    if (stream === "lifecycle") {
      if (d.phase === "error") {
        (run.last || this.#bubble(run)).error(d.error || "The run failed.");
      }
      if (d.phase === "end" || d.phase === "error") this.#endRun(run);
      return;
    }
    if (stream === "assistant" || stream === "thinking") {
      const bubble = this.#bubble(run, d.messageId);
      switch (d.phase) {
        case "message_start":
          return;
        case "message_stop":
          bubble.done();
          if (d.stopReason === "aborted") bubble.error("Stopped.");
          else if (d.errorMessage) bubble.error(d.errorMessage);
          return;
        case "block_start": {
          const b = bubble.block(d.contentIndex, d.blockType || "text");
          if (b.type === "toolCall") b.setTool(d.toolName, d.toolCallId);
          else b.setStreaming(true);
          return;
        }
        case "block_stop": {
          const b = bubble.blocks.get(d.contentIndex);
          if (b) b.setStreaming(false);
          return;
        }
        case "delta": {
          const type = d.blockType || (stream === "thinking" ? "thinking" : "text");
          const index = d.contentIndex !== undefined ? d.contentIndex : (bubble.blocks.size ? bubble.nextIndex() - 1 : 0);
          const b = bubble.block(index, type);
          if (type === "toolCall") {
            b.setArgs(b.args + (d.argsDelta || ""));
          } else if (type === "thinking") {
            b.streaming = true;
            b.setText(d.text !== undefined ? d.text : b.text + (d.delta || ""));
          } else {
            b.streaming = true;
            b.setText(d.replace ? (d.text || "") : b.text + (d.delta || ""));
          }
          return;
        }
      }
      return;
    }
    if (stream === "tool") {
      let block = null;
      for (const b of run.bubbles.values()) block = block || b.toolBlock(d.toolCallId);
      if (!block) {
        const bubble = this.#bubble(run, d.messageId);
        block = bubble.block(d.contentIndex !== undefined ? d.contentIndex : bubble.nextIndex(), "toolCall");
        block.setTool(d.name, d.toolCallId);
      }
      if (d.phase === "start") {
        block.setArgs(d.args || {});
        block.setToolState("executing");
      } else if (d.phase === "update") {
        block.setToolState("executing", d.partialResult);
      } else if (d.phase === "result") {
        block.setToolState(d.isError ? "failed" : "done", d.result);
      }
    }
  }

  /** Tool call ids whose results the live stream did not carry. */
  missingResults() {
    const ids = [];
    for (const run of this.runs.values()) {
      for (const b of run.bubbles.values()) {
        for (const blk of b.blocks.values()) {
          if (blk.type === "toolCall" && blk.resultEl.hidden && blk.el.dataset.toolCallId) ids.push(blk.el.dataset.toolCallId);
        }
      }
    }
    return ids;
  }

  /**
   * Fills in tool results from chat.history's messages: the gateway sends
   * live tool events without their results (as OpenClaw does unless the
   * session is verbose), so they are read back once the run ends.
   */
  fillToolResults(messages) {
    const byId = new Map();
    for (const m of messages) if (m && m.role === "toolResult") byId.set(m.toolCallId, m);
    for (const run of this.runs.values()) {
      for (const b of run.bubbles.values()) {
        for (const blk of b.blocks.values()) {
          const m = blk.type === "toolCall" && byId.get(blk.el.dataset.toolCallId);
          if (m) blk.setToolState(m.isError ? "failed" : "done", { content: m.content });
        }
      }
    }
  }

  #endRun(run) {
    run.ended = true;
    run.el.classList.remove("live");
    for (const b of run.bubbles.values()) b.done();
  }

  /** Applies a chat event's payload ({runId, state, message, errorMessage}). */
  chatEvent(ev, activeRunId) {
    this.#stickToBottom(() => {
      const run = this.runs.get(ev.runId) || (activeRunId && this.runs.get(activeRunId)) || this.#run(ev.runId);
      const text = ev.message ? textOf(ev.message.content) : "";
      // A client that saw no agent events (they can be dropped when slow)
      // shows the chat snapshot instead.
      const hasText = [...run.bubbles.values()].some((b) => [...b.blocks.values()].some((x) => x.type === "text" && x.text));
      if (text && !hasText) {
        const b = this.#bubble(run, "chat");
        const blk = b.block(0, "text");
        blk.streaming = ev.state === "delta";
        blk.setText(text);
      }
      if (ev.state === "delta") return;
      if (ev.state === "aborted") {
        (run.last || this.#bubble(run)).error("Stopped.");
      } else if (ev.state === "error") {
        (run.last || this.#bubble(run)).error(ev.errorMessage || "The run failed.");
      }
      this.#endRun(run);
    });
  }
}
