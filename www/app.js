// Demo page for agent-compaction: the display view and the LLM view of one
// flat message array, side by side. Plain ES module; the package comes in
// through the import map in index.html ("agent-compaction" → /pkg/index.js).
//
// Message data is only ever written with textContent (never innerHTML).
import { SAMPLE_SESSION } from "./sample-session.js";

const PREVIEW_CHARS = 700;
const PREVIEW_LINES = 14;
const SUMMARY_PREAMBLE = "The conversation history before this point was compacted into the following summary:";

const el = (id) => document.getElementById(id);
const ui = {
  error: el("error"),
  status: el("status"),
  source: el("source"),
  undo: el("undo"),
  sample: el("load-sample"),
  file: el("file-input"),
  displayList: el("display-list"),
  displayCount: el("display-count"),
  llmList: el("llm-list"),
  llmCount: el("llm-count"),
};

let lib; // the agent-compaction module
let messages = []; // the current session: replaced, never mutated
let history = []; // earlier arrays, for Undo
const numberFormat = new Intl.NumberFormat("en-US");

// ---------------------------------------------------------------- errors

function showError(context, err) {
  const detail = err instanceof Error ? err.message : String(err);
  ui.error.textContent = `${context}: ${detail}`;
  ui.error.hidden = false;
  console.error(context, err);
}

function clearError() {
  ui.error.textContent = "";
  ui.error.hidden = true;
}

window.addEventListener("error", (event) => showError("Unexpected error", event.error ?? event.message));
window.addEventListener("unhandledrejection", (event) => showError("Unexpected error", event.reason));

// ---------------------------------------------------------------- session

/** Messages are immutable in this app: freezing them also catches a library that would mutate them. */
function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

function setSession(list, sourceLabel) {
  history = [];
  ui.source.textContent = sourceLabel;
  ui.status.textContent = "";
  setMessages(deepFreeze([...list]));
  ui.displayList.scrollTop = 0;
  ui.llmList.scrollTop = 0;
}

function setMessages(next, { remember = false } = {}) {
  if (remember) history.push(messages);
  messages = next;
  ui.undo.disabled = history.length === 0;
  render();
}

/**
 * pi JSONL session → flat array. `message` entries give their `message`
 * object, in file order. A `compaction` entry becomes a compactionSummary
 * placed where pi's context would start: before its first kept message
 * (`firstKeptEntryId`, or `firstKeptEntryIndex` in version-1 files), or at
 * the entry's own position when that message is not found before it.
 * `custom_message` and `branch_summary` entries become the messages pi
 * builds from them. Other entries (session header, model and thinking-level
 * changes, labels) carry no message.
 */
export function parsePiSession(text) {
  const entries = [];
  let skipped = 0;
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line);
      if (entry && typeof entry === "object") entries.push(entry);
      else skipped++;
    } catch {
      skipped++; // pi skips lines it cannot parse, too
    }
  }

  const out = [];
  const positionOfEntry = new Map(); // entry index → index in `out` of the message it produced
  let lastSummaryAt = -1;
  entries.forEach((entry, i) => {
    switch (entry.type) {
      case "message":
        positionOfEntry.set(i, out.length);
        out.push(entry.message);
        break;
      case "custom_message":
        positionOfEntry.set(i, out.length);
        out.push({
          role: "custom",
          customType: entry.customType,
          content: entry.content,
          display: entry.display,
          details: entry.details,
          timestamp: Date.parse(entry.timestamp),
        });
        break;
      case "branch_summary":
        if (!entry.summary) break;
        positionOfEntry.set(i, out.length);
        out.push({ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: Date.parse(entry.timestamp) });
        break;
      case "compaction": {
        const summary = {
          role: "compactionSummary",
          summary: String(entry.summary ?? ""),
          tokensBefore: entry.tokensBefore,
          timestamp: Date.parse(entry.timestamp),
        };
        if (entry.details && Array.isArray(entry.details.readFiles) && Array.isArray(entry.details.modifiedFiles)) {
          summary.details = { readFiles: entry.details.readFiles, modifiedFiles: entry.details.modifiedFiles };
        }
        if (entry.fromHook) summary.fromHook = true;
        let keptEntry = -1;
        if (typeof entry.firstKeptEntryIndex === "number") keptEntry = entry.firstKeptEntryIndex;
        else if (entry.firstKeptEntryId != null) keptEntry = entries.findIndex((e, j) => j < i && e.id === entry.firstKeptEntryId);
        let at = out.length;
        if (keptEntry >= 0 && keptEntry < i) {
          // the first message at or after the kept entry
          for (let j = keptEntry; j < i; j++) {
            if (positionOfEntry.has(j)) {
              at = positionOfEntry.get(j);
              break;
            }
          }
        }
        at = Math.max(at, lastSummaryAt + 1); // summaries stay in file order
        out.splice(at, 0, summary);
        for (const [k, v] of positionOfEntry) if (v >= at) positionOfEntry.set(k, v + 1);
        lastSummaryAt = at;
        break;
      }
      default:
        break;
    }
  });
  return { messages: out, entries: entries.length, skipped };
}

// ---------------------------------------------------------------- text of a message

function textOfContent(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      if (!block || typeof block !== "object") return "";
      if (block.type === "text") return block.text ?? "";
      if (block.type === "image") return `[image ${block.mimeType ?? ""}]`;
      return "";
    })
    .join("\n");
}

/** → [{ kind, label?, text }] for the row body. */
function blocksOf(message) {
  const blocks = [];
  const push = (kind, text, label) => blocks.push({ kind, text: String(text ?? ""), label });
  switch (message?.role) {
    case "user":
      push("text", textOfContent(message.content));
      break;
    case "assistant":
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block?.type === "text") push("text", block.text);
        else if (block?.type === "thinking") push("thinking", block.thinking, "thinking");
        else if (block?.type === "toolCall") push("tool", JSON.stringify(block.arguments ?? {}, null, 2), `→ ${block.name}`);
        else if (block?.type === "image") push("text", `[image ${block.mimeType ?? ""}]`);
      }
      if (message.errorMessage) push("errorText", message.errorMessage, "error");
      break;
    case "toolResult":
      push(message.isError ? "errorText" : "output", textOfContent(message.content));
      break;
    case "bashExecution":
      push("tool", message.command, "$");
      push("output", message.output);
      break;
    case "custom":
      push("text", textOfContent(message.content));
      break;
    case "branchSummary":
    case "compactionSummary":
      push("text", message.summary);
      break;
    default:
      push("output", JSON.stringify(message, null, 2));
  }
  return blocks.filter((b) => b.text !== "" || b.label);
}

function metaOf(message) {
  const parts = [];
  if (message?.role === "assistant") {
    if (message.model) parts.push(message.model);
    const u = message.usage;
    if (u && typeof u === "object") {
      parts.push(`in ${numberFormat.format((u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0))} · out ${numberFormat.format(u.output ?? 0)}`);
    }
    if (message.stopReason) parts.push(message.stopReason);
  } else if (message?.role === "toolResult") {
    parts.push(message.toolName ?? "tool");
    if (message.isError) parts.push("error");
  } else if (message?.role === "custom") {
    parts.push(message.customType ?? "custom");
  }
  if (typeof message?.timestamp === "number" && Number.isFinite(message.timestamp)) {
    parts.push(new Date(message.timestamp).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
  }
  return parts.join(" · ");
}

function roughTokens(list) {
  let chars = 0;
  for (const m of list) for (const b of blocksOf(m)) chars += b.text.length;
  return Math.ceil(chars / 4);
}

// ---------------------------------------------------------------- rendering

function node(tag, className, text) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== undefined) n.textContent = text;
  return n;
}

function renderBlock(block) {
  const wrap = node("div", `block block-${block.kind}`);
  if (block.label) wrap.append(node("span", "block-label", block.label));
  const pre = node("pre", "block-text");
  const full = block.text;
  let cut = Math.min(full.length, PREVIEW_CHARS);
  for (let i = 0, lines = 0; i < cut; i++) {
    if (full.charCodeAt(i) === 10 && ++lines === PREVIEW_LINES) cut = i;
  }
  if (cut < full.length) {
    pre.textContent = full.slice(0, cut) + "…";
    const more = node("button", "more", `show all (${numberFormat.format(full.length)} characters)`);
    more.type = "button";
    more.addEventListener("click", () => {
      pre.textContent = full;
      more.remove();
    });
    wrap.append(pre, more);
  } else {
    pre.textContent = full;
    wrap.append(pre);
  }
  return wrap;
}

function renderMessageRow(message, { index, label, sourceIndex } = {}) {
  const role = typeof message?.role === "string" ? message.role : "unknown";
  const li = node("li", `row role-${role.replace(/[^a-zA-Z0-9_-]/g, "")}`);
  li.dataset.role = role;
  if (sourceIndex !== undefined) li.dataset.index = String(sourceIndex);
  const head = node("div", "row-head");
  head.append(node("span", "idx", `#${index + 1}`), node("span", "role", label ?? role));
  const meta = metaOf(message);
  if (meta) head.append(node("span", "meta", meta));
  li.append(head);
  for (const block of blocksOf(message)) li.append(renderBlock(block));
  return li;
}

function renderDivider(divider, sourceIndex) {
  const li = node("li", "divider");
  li.dataset.role = "compactionDivider";
  li.dataset.index = String(sourceIndex);
  const tokens = typeof divider.tokensBefore === "number" ? `${numberFormat.format(divider.tokensBefore)} tokens before` : "";
  const when =
    typeof divider.timestamp === "number" && Number.isFinite(divider.timestamp)
      ? new Date(divider.timestamp).toLocaleString([], { dateStyle: "short", timeStyle: "short" })
      : "";
  li.append(node("span", "divider-label", ["summary", tokens, when].filter(Boolean).join(" · ")));
  li.title = "Earlier messages were compacted into a summary here; the model sees the summary instead of them.";
  return li;
}

/** For each display row, the index of its message in `messages` (dividers: their summary). */
function sourceIndices(display) {
  const out = [];
  let j = 0;
  for (const row of display) {
    const divider = row?.role === "compactionDivider";
    let k = j;
    while (k < messages.length && !(divider ? messages[k]?.role === "compactionSummary" : messages[k] === row)) k++;
    if (k === messages.length) {
      out.push(-1);
    } else {
      out.push(k);
      j = k + 1;
    }
  }
  return out;
}

function render() {
  clearError();
  let display = [];
  let llm = [];
  try {
    display = lib.agentMessagesToChatMessages(messages, { divider: true });
    llm = lib.convertToLlm(lib.transformContext(messages));
  } catch (err) {
    showError("agent-compaction failed on this session", err);
  }

  const indices = sourceIndices(display);
  const displayRows = document.createDocumentFragment();
  let shown = 0;
  let dividers = 0;
  display.forEach((row, i) => {
    if (row?.role === "compactionDivider") {
      dividers++;
      displayRows.append(renderDivider(row, indices[i]));
      return;
    }
    const li = renderMessageRow(row, { index: shown++, sourceIndex: indices[i] });
    const insert = node("button", "insert", "Insert summary here");
    insert.type = "button";
    insert.title = "Insert a compaction summary before this message: the model will see the summary and the messages from here on.";
    if (indices[i] < 0) {
      insert.disabled = true;
      insert.title = "This row is not one of the session's message objects, so it cannot be located in the array.";
    }
    insert.addEventListener("click", () => {
      try {
        insertSummaryBefore(indices[i]);
      } catch (err) {
        showError("Could not insert a summary", err);
      }
    });
    li.querySelector(".row-head").append(insert);
    displayRows.append(li);
  });
  ui.displayList.replaceChildren(displayRows);
  ui.displayCount.dataset.messages = String(shown);
  ui.displayCount.dataset.dividers = String(dividers);
  ui.displayCount.textContent =
    `${numberFormat.format(shown)} message${shown === 1 ? "" : "s"}` +
    (dividers ? ` · ${dividers} summar${dividers === 1 ? "y" : "ies"}` : "");

  const originals = new Set(messages);
  const llmRows = document.createDocumentFragment();
  llm.forEach((m, i) => {
    const converted = !originals.has(m);
    const isSummary = converted && textOfContent(m?.content).startsWith(SUMMARY_PREAMBLE);
    const li = renderMessageRow(m, { index: i, label: isSummary ? `${m.role} · summary` : undefined });
    if (converted) li.classList.add("converted");
    if (isSummary) li.classList.add("summary");
    llmRows.append(li);
  });
  ui.llmList.replaceChildren(llmRows);
  ui.llmCount.dataset.messages = String(llm.length);
  ui.llmCount.textContent = `${numberFormat.format(llm.length)} message${llm.length === 1 ? "" : "s"} · ~${numberFormat.format(roughTokens(llm))} tokens`;
}

// ---------------------------------------------------------------- actions

const READ_TOOLS = new Set(["read", "grep", "find", "ls"]);
const WRITE_TOOLS = new Set(["write", "edit"]);

function insertSummaryBefore(index) {
  if (!(index >= 0 && index <= messages.length)) return;
  const llmBefore = Number(ui.llmCount.dataset.messages ?? 0);
  // The range a real compaction would summarize: after the previous summary, up to here.
  let start = 0;
  for (let i = index - 1; i >= 0; i--) {
    if (messages[i]?.role === "compactionSummary") {
      start = i + 1;
      break;
    }
  }
  const covered = messages.slice(start, index);
  const readFiles = new Set();
  const modifiedFiles = new Set();
  for (const m of covered) {
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      const path = b?.type === "toolCall" ? b.arguments?.path : undefined;
      if (typeof path !== "string") continue;
      if (WRITE_TOOLS.has(b.name)) modifiedFiles.add(path);
      else if (READ_TOOLS.has(b.name)) readFiles.add(path);
    }
  }
  for (const f of modifiedFiles) readFiles.delete(f);
  const firstUser = covered.find((m) => m?.role === "user");
  const goal = firstUser ? textOfContent(firstUser.content).replace(/\s+/g, " ").slice(0, 200) : "(no user message)";
  const summary = deepFreeze({
    role: "compactionSummary",
    summary: [
      "## Goal",
      goal,
      "",
      "## Progress",
      `- ${covered.length} earlier message${covered.length === 1 ? "" : "s"} folded into this summary by the demo's "Insert summary here".`,
      "",
      "## Critical Context",
      "- A real app writes this text with its summarizer (Compactor.compact).",
    ].join("\n"),
    tokensBefore: roughTokens(lib.convertToLlm(lib.transformContext(messages.slice(0, index)))),
    details: { readFiles: [...readFiles].sort(), modifiedFiles: [...modifiedFiles].sort() },
    timestamp: Date.now(),
  });
  // A new array; the old one and its messages are left as they were.
  setMessages(Object.freeze([...messages.slice(0, index), summary, ...messages.slice(index)]), { remember: true });
  const llmAfter = Number(ui.llmCount.dataset.messages ?? 0);
  ui.status.textContent = `Inserted a summary before message ${index + 1} of the array: LLM view ${llmBefore} → ${llmAfter} messages.`;
}

function undo() {
  if (!history.length) return;
  const previous = history.pop();
  setMessages(previous);
  ui.status.textContent = "Undid the last inserted summary.";
}

async function loadFile(file) {
  if (!file) return;
  try {
    const { messages: list, entries, skipped } = parsePiSession(await file.text());
    if (entries === 0) throw new Error("no JSON lines found (expected a pi session .jsonl file)");
    setSession(list, `${file.name} · ${numberFormat.format(entries)} entries`);
    if (skipped) ui.status.textContent = `${skipped} line${skipped === 1 ? "" : "s"} could not be parsed and were skipped.`;
  } catch (err) {
    showError(`Could not load ${file.name}`, err);
  }
}

// ---------------------------------------------------------------- start

try {
  lib = await import("agent-compaction");
} catch (err) {
  showError("Could not load the agent-compaction package from /pkg/ (build it with `node scripts/build.mjs`)", err);
}

if (lib) {
  ui.sample.addEventListener("click", () => {
    ui.file.value = "";
    setSession(SAMPLE_SESSION, "built-in sample session");
  });
  ui.file.addEventListener("change", () => loadFile(ui.file.files?.[0]));
  ui.undo.addEventListener("click", undo);
  setSession(SAMPLE_SESSION, "built-in sample session");
  document.documentElement.dataset.ready = "true";
}
