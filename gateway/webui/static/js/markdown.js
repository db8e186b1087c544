// Safe markdown: message text is turned into DOM nodes directly, every
// character of it through createTextNode or textContent, so no HTML in a
// message is ever parsed; formatting (code, emphasis, lists, quotes,
// headings, links) only adds elements around that text. Links keep only
// http, https and mailto targets, open in a new tab and carry
// rel="noopener noreferrer"; any other scheme (javascript:, data:, vbscript:
// …) is shown as inert text.

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** Returns the absolute URL if it is http(s) or mailto, else null. */
export function safeURL(raw) {
  const s = String(raw).trim();
  // Browsers ignore tabs and newlines inside schemes ("java\tscript:").
  if (/[\u0000-\u001f\u007f\s]/.test(s)) return null;
  let u;
  try {
    u = new URL(s);
  } catch (_) {
    return null; // relative or malformed: nothing to link to
  }
  return SAFE_SCHEMES.has(u.protocol) ? u.href : null;
}

function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}

function link(url, labelNodes, text) {
  const href = safeURL(url);
  if (!href) {
    const span = el("span", "md-unsafe-link");
    span.title = "link removed: only http, https and mailto links are allowed";
    span.append(...labelNodes);
    return span;
  }
  const a = el("a");
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  if (labelNodes.length) a.append(...labelNodes); else a.textContent = text;
  return a;
}

// One alternation per inline construct; the earliest match wins.
const INLINE = new RegExp([
  /(`+)([\s\S]*?[^`])\1(?!`)/.source, // 1,2 code span
  /\[([^\[\]\n]*)\]\(\s*<?([^\s<>()]*(?:\([^\s()]*\)[^\s<>()]*)*)>?\s*\)/.source, // 3,4 [label](url)
  /<((?:https?:\/\/|mailto:)[^\s<>]+)>/.source, // 5 <autolink>
  /((?:https?:\/\/|www\.)[^\s<>]*[^\s<>.,:;"'!?)\]*_~])/.source, // 6 bare URL
  /\*\*(?=\S)([\s\S]*?\S)\*\*/.source, // 7 bold
  /(?<![\w])__(?=\S)([\s\S]*?\S)__(?![\w])/.source, // 8 bold
  /~~(?=\S)([\s\S]*?\S)~~/.source, // 9 strike
  /\*(?=[^\s*])([\s\S]*?[^\s*])\*/.source, // 10 italic
  /(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])/.source, // 11 italic
].join("|"));

/** Renders inline markdown of one block into nodes. */
export function renderInline(text) {
  const out = [];
  let rest = String(text);
  while (rest.length) {
    const m = INLINE.exec(rest);
    if (!m) {
      out.push(document.createTextNode(rest));
      break;
    }
    if (m.index > 0) out.push(document.createTextNode(rest.slice(0, m.index)));
    rest = rest.slice(m.index + m[0].length);
    if (m[1] !== undefined) {
      const code = el("code");
      code.textContent = m[2].length > 2 && m[2].startsWith(" ") && m[2].endsWith(" ") ? m[2].slice(1, -1) : m[2];
      out.push(code);
    } else if (m[3] !== undefined) {
      out.push(link(m[4], renderInline(m[3]), m[4]));
    } else if (m[5] !== undefined) {
      out.push(link(m[5], [], m[5]));
    } else if (m[6] !== undefined) {
      const url = m[6].startsWith("www.") ? "https://" + m[6] : m[6];
      out.push(link(url, [document.createTextNode(m[6])], m[6]));
    } else if (m[7] !== undefined || m[8] !== undefined) {
      const b = el("strong");
      b.append(...renderInline(m[7] !== undefined ? m[7] : m[8]));
      out.push(b);
    } else if (m[9] !== undefined) {
      const s = el("del");
      s.append(...renderInline(m[9]));
      out.push(s);
    } else {
      const i = el("em");
      i.append(...renderInline(m[10] !== undefined ? m[10] : m[11]));
      out.push(i);
    }
  }
  return out;
}

// appendLines adds inline text whose single newlines are line breaks.
function appendLines(parent, lines) {
  lines.forEach((line, i) => {
    if (i > 0) parent.append(el("br"));
    parent.append(...renderInline(line));
  });
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const BULLET = /^(\s*)([-*+])\s+(.*)$/;
const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;

/** Renders markdown text into a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  renderBlocks(frag, String(text == null ? "" : text).replace(/\r\n?/g, "\n").split("\n"), 0);
  return frag;
}

function renderBlocks(parent, lines, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }

    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      const close = new RegExp("^ {0,3}" + marker[0] + "{" + marker.length + ",}\\s*$");
      while (i < lines.length && !close.test(lines[i])) {
        body.push(lines[i]);
        i++;
      }
      i++; // closing fence (or the end of the text while still streaming)
      const pre = el("pre");
      const code = el("code");
      if (fence[2]) code.dataset.lang = fence[2];
      code.textContent = body.join("\n");
      pre.append(code);
      parent.append(pre);
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      const h = el("h" + Math.min(heading[1].length + 2, 6), "md-heading");
      h.append(...renderInline(heading[2]));
      parent.append(h);
      i++;
      continue;
    }

    if (RULE.test(line)) {
      parent.append(el("hr"));
      i++;
      continue;
    }

    if (QUOTE.test(line) && depth < 8) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(lines[i].replace(QUOTE, ""));
        i++;
      }
      const q = el("blockquote");
      renderBlocks(q, inner, depth + 1);
      parent.append(q);
      continue;
    }

    if (BULLET.test(line) || ORDERED.test(line)) {
      const ordered = !BULLET.test(line);
      const re = ordered ? ORDERED : BULLET;
      const list = el(ordered ? "ol" : "ul");
      if (ordered) {
        const start = parseInt(ORDERED.exec(line)[2], 10);
        if (start !== 1) list.start = start;
      }
      const items = [];
      while (i < lines.length) {
        const m = re.exec(lines[i]);
        if (m) {
          items.push([m[3]]);
          i++;
          continue;
        }
        // An indented line continues the item; anything else ends the list.
        if (items.length && lines[i].trim() && /^\s{2,}/.test(lines[i]) && !FENCE.test(lines[i])) {
          items[items.length - 1].push(lines[i].trim());
          i++;
          continue;
        }
        break;
      }
      for (const itemLines of items) {
        const li = el("li");
        appendLines(li, itemLines);
        list.append(li);
      }
      parent.append(list);
      continue;
    }

    // A paragraph: lines up to a blank line or another block.
    const para = [];
    while (i < lines.length && lines[i].trim() && !(para.length && (FENCE.test(lines[i]) || HEADING.test(lines[i]) || QUOTE.test(lines[i]) || BULLET.test(lines[i])))) {
      para.push(lines[i]);
      i++;
    }
    const p = el("p");
    appendLines(p, para);
    parent.append(p);
  }
}
