// The agent-compaction demo: pi-agent-core's real `Agent` running in the
// page, talking to an OpenAI-compatible endpoint (by default the local
// deterministic coding model that scripts/serve.mjs mounts at /local/v1),
// with a `Compactor` attached that keeps its context inside the window and
// a `SessionStore` that keeps every session in IndexedDB.
//
// Built for the browser by scripts/demo-build.mjs (Vite). Message data is
// only ever written into the page with textContent — never innerHTML.
import { Agent } from "@mariozechner/pi-agent-core";
import {
  Compactor,
  ConflictError,
  SessionStore,
  agentMessagesToChatMessages,
  convertToLlm,
  openAiSummarizer,
  removeLastCompaction,
  resolveSettings,
  transformContext,
} from "agent-compaction";
import { historyTools } from "agent-compaction/pi-agent-core";
import { DEMO_TOOLS, demoAgentTools } from "./local-tools.js";

// ---------------------------------------------------------------- constants

const SESSION_DB = "agent-compaction-demo";
const SETTINGS_DB = "agent-compaction-demo-settings";
const LOCAL_BASE_URL = new URL("/local/v1", location.href).href;
const LOCAL_MODEL_ID = "local-coder";
const DEFAULT_WINDOW = 16_000;
const NEW_TITLE = "New session";
const SUMMARY_PREAMBLE = "The conversation history before this point was compacted into the following summary:";
const TOOL_PREVIEW_CHARS = 4_000;
const MODEL_PREVIEW_CHARS = 1_200;

/**
 * Threshold compactions start in the background at 0.8 of the threshold
 * (the package's default); `?background=off` makes each one block the next
 * request, as pi does.
 */
const BACKGROUND_AT = new URLSearchParams(location.search).get("background") === "off" ? false : undefined;

const SYSTEM_PROMPT = [
  "You are a coding agent working in the user's project.",
  "Use the tools to look before you answer: read_file reads a file, list_files lists a directory,",
  "run_command runs a shell command (tests, builds, git, search).",
  "Quote what the tool output shows; keep answers short and concrete.",
].join(" ");

const numberFormat = new Intl.NumberFormat("en-US");
const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? "" : "s"}`;
const fmt = (n) => (Number.isFinite(n) ? numberFormat.format(Math.round(n)) : "–");

// ---------------------------------------------------------------- DOM

const $ = (id) => document.getElementById(id);
const ui = {
  body: document.body,
  newSession: $("new-session"),
  sessionList: $("session-list"),
  importButton: $("import-session"),
  importFile: $("import-file"),
  exportButton: $("export-session"),
  openSettings: $("open-settings"),
  persistStorage: $("persist-storage"),
  storageUsage: $("storage-usage"),
  title: $("session-title"),
  endpoint: $("endpoint-label"),
  toggleModel: $("toggle-model-view"),
  meterFill: $("meter-fill"),
  meterThreshold: $("meter-threshold"),
  stats: $("stats"),
  statTokens: $("stat-tokens"),
  statThreshold: $("stat-threshold"),
  statMessages: $("stat-messages"),
  statLast: $("stat-last"),
  notices: $("notices"),
  conversation: $("conversation"),
  compacting: $("compacting"),
  compactingText: $("compacting-text"),
  composer: $("composer"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  undo: $("undo-compaction"),
  modelView: $("model-view"),
  modelCount: $("model-count"),
  modelSystem: $("model-system"),
  modelList: $("model-list"),
  settingsDialog: $("settings-dialog"),
  settingsForm: $("settings-form"),
  setBaseUrl: $("set-base-url"),
  setModel: $("set-model"),
  setApiKey: $("set-api-key"),
  setContextWindow: $("set-context-window"),
  setReserve: $("set-reserve"),
  setKeep: $("set-keep"),
  setAiSdk: $("set-ai-sdk"),
  settingsAuto: $("settings-auto"),
  settingsError: $("settings-error"),
  settingsLocal: $("settings-local"),
  settingsCancel: $("settings-cancel"),
};

/** An element with optional class and text (text through textContent only). */
function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/**
 * Appends `text` to `parent` with `inline code`, **bold** and fenced code
 * blocks as <code>/<strong>/<pre> elements. Every piece goes in through textContent.
 */
function appendRichText(parent, text) {
  const parts = String(text).split(/(```[\s\S]*?(?:```|$))/);
  for (const part of parts) {
    if (part.startsWith("```")) {
      const body = part.replace(/^```[^\n]*\n?/, "").replace(/```$/, "");
      parent.append(h("pre", "code-block", body));
      continue;
    }
    for (const piece of part.split(/(`[^`\n]+`)/)) {
      if (piece.length > 2 && piece.startsWith("`") && piece.endsWith("`")) {
        parent.append(h("code", null, piece.slice(1, -1)));
        continue;
      }
      for (const bit of piece.split(/(\*\*[^*\n]+\*\*)/)) {
        if (bit.length > 4 && bit.startsWith("**") && bit.endsWith("**")) parent.append(h("strong", null, bit.slice(2, -2)));
        else if (bit) parent.append(document.createTextNode(bit));
      }
    }
  }
}

// ---------------------------------------------------------------- settings (own IndexedDB database)

let settingsDbPromise;
function settingsDb() {
  settingsDbPromise ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(SETTINGS_DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("settings");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(new Error(`${SETTINGS_DB}: the upgrade is blocked by another tab`));
  });
  return settingsDbPromise;
}

async function getSetting(key) {
  const db = await settingsDb();
  return new Promise((resolve, reject) => {
    const req = db.transaction("settings", "readonly").objectStore("settings").get(key);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function putSetting(key, value) {
  const db = await settingsDb();
  return new Promise((resolve, reject) => {
    const tx = db.transaction("settings", "readwrite");
    tx.objectStore("settings").put(value, key);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("settings write aborted"));
  });
}

/** Saved endpoint settings: empty fields mean "the local model" / "auto". */
const EMPTY_ENDPOINT = Object.freeze({
  baseUrl: "",
  model: "",
  apiKey: "",
  contextWindow: null,
  reserveTokens: null,
  keepRecentTokens: null,
  aiSdk: false,
});

/** Compaction settings scaled to the window (3,000 / 4,000 for 16k; pi's defaults at most). */
export function autoCompaction(contextWindow) {
  return {
    reserveTokens: Math.min(16_384, Math.round((contextWindow * 3) / 16)),
    keepRecentTokens: Math.min(20_000, Math.round(contextWindow / 4)),
  };
}

/** The local model's config (its /config endpoint), or null when it is not there. */
async function localModelConfig() {
  try {
    const res = await fetch(new URL("config", `${LOCAL_BASE_URL}/`), { cache: "no-store" });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

/** The local model's own window, or null. */
async function localModelWindow() {
  const config = await localModelConfig();
  return Number.isInteger(config?.contextWindow) && config.contextWindow > 0 ? config.contextWindow : null;
}

/** The endpoint in force: saved settings with the blanks filled in. */
async function resolveEndpoint(saved) {
  const local = !saved.baseUrl;
  const baseUrl = local ? LOCAL_BASE_URL : saved.baseUrl.replace(/\/+$/, "");
  const modelId = saved.model || LOCAL_MODEL_ID;
  const localConfig = local ? await localModelConfig() : null;
  let contextWindow = saved.contextWindow;
  let windowSource = "set";
  if (!contextWindow && Number.isInteger(localConfig?.contextWindow) && localConfig.contextWindow > 0) {
    contextWindow = localConfig.contextWindow;
    windowSource = "local model";
  }
  if (!contextWindow) {
    contextWindow = DEFAULT_WINDOW;
    windowSource = "default";
  }
  const auto = autoCompaction(contextWindow);
  let compaction = {
    reserveTokens: saved.reserveTokens ?? auto.reserveTokens,
    keepRecentTokens: saved.keepRecentTokens ?? auto.keepRecentTokens,
  };
  let warning = null;
  try {
    resolveSettings(compaction, { contextWindow });
  } catch (err) {
    warning = `Saved compaction settings do not fit a ${fmt(contextWindow)}-token window (${err.message}); using ${fmt(auto.reserveTokens)} / ${fmt(auto.keepRecentTokens)}.`;
    compaction = auto;
  }
  return {
    local,
    baseUrl,
    modelId,
    apiKey: saved.apiKey || "local",
    contextWindow,
    windowSource,
    ...compaction,
    // Run the agent on the AI SDK (www/ai-sdk-agent.js) instead of pi-agent-core.
    aiSdk: saved.aiSdk === true,
    // The demo's tools answer instantly; pace them like the local model
    // streams (none when it is set to no delay, as in the tests).
    toolDelayMs: local && Number.isInteger(localConfig?.delayMs) ? Math.min(400, 2 * localConfig.delayMs) : 200,
    warning,
  };
}

/** The pi-ai Model for an endpoint. */
function piModel(endpoint) {
  return {
    id: endpoint.modelId,
    name: endpoint.local ? "Local coding model" : endpoint.modelId,
    api: "openai-completions",
    provider: endpoint.local ? "local" : "openai-compatible",
    baseUrl: endpoint.baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: endpoint.contextWindow,
    maxTokens: Math.max(256, Math.min(4096, endpoint.reserveTokens)),
  };
}

// ---------------------------------------------------------------- app state

let store; // SessionStore
let savedEndpoint = { ...EMPTY_ENDPOINT };
let endpoint; // resolveEndpoint(savedEndpoint)
let sessions = []; // SessionMeta[] (newest first)
let current = null; // the open session: see openSession
let opening = Promise.resolve(); // serializes session switches
let settledCount = 0;
let wasBusy = false;
const notices = []; // { kind, text }

/** Whether the page's session is doing anything (streaming, compacting, or about to retry). */
function isBusy(s = current) {
  if (!s) return true;
  return s.agent.state.isStreaming || isCompacting(s) || s.retryPending || s.manualCompacting;
}

/** A compaction the conversation waits for (one in the background leaves the input enabled). */
function isCompacting(s = current) {
  if (!s) return false;
  const waitedFor = s.compactor.isCompacting && !s.compactor.isCompactingInBackground;
  return waitedFor || s.manualCompacting || s.stateCompacting;
}

function notice(kind, text) {
  // (the same notice again, say one per refused save, moves to the end instead of repeating)
  const same = notices.findIndex((n) => n.kind === kind && n.text === String(text));
  if (same >= 0) notices.splice(same, 1);
  notices.push({ kind, text: String(text) });
  while (notices.length > 4) notices.shift();
  renderNotices();
}

function clearNotices() {
  notices.length = 0;
  renderNotices();
}

function renderNotices() {
  ui.notices.replaceChildren(
    ...notices.map((n, i) => {
      const row = h("div", `notice ${n.kind}`);
      row.dataset.kind = n.kind;
      row.append(h("span", "notice-text", n.text));
      const close = h("button", "notice-close", "×");
      close.type = "button";
      close.title = "Dismiss";
      close.addEventListener("click", () => {
        notices.splice(i, 1);
        renderNotices();
      });
      row.append(close);
      return row;
    }),
  );
}

function showError(context, err) {
  const detail = err instanceof Error ? err.message : String(err);
  console.warn(context, err);
  notice("error", `${context}: ${detail}`);
}

// Errors of the summarizer calls (see `summarizer()`): the compactor reports
// their outcome itself (fallback or compaction_end).
const summarizerErrors = new WeakSet();

window.addEventListener("unhandledrejection", (event) => {
  if (summarizerErrors.has(event.reason)) {
    // agent-compaction starts a split turn's two summarizer requests together
    // but listens to the turn-prefix one only after the history one is done:
    // when the prefix request fails first, the browser briefly calls its
    // rejection unhandled. It is handled (the extractive fallback or a
    // compaction_end error says what happened), so keep it off the console.
    event.preventDefault();
    return;
  }
  showError("Unexpected error", event.reason);
});

// ---------------------------------------------------------------- sessions

let listSeq = 0;
// The site's storage as store.estimate() reads it, and whether the browser
// keeps it (store.persist(), asked from the "Keep data" button: a user
// action, once there is something worth keeping).
async function showStorage() {
  const e = await store.estimate().catch(() => null);
  if (!e?.supported) {
    ui.storageUsage.textContent = "storage: unknown";
    return;
  }
  const size = (bytes) => {
    const [unit, div] = bytes >= 1e9 ? ["GB", 1e9] : bytes >= 1e6 ? ["MB", 1e6] : ["KB", 1e3];
    return `${(bytes / div).toFixed(1)} ${unit}`;
  };
  ui.storageUsage.textContent = `${size(e.usage)} of ${size(e.quota)} used${e.persisted ? " · kept" : ""}`;
  ui.persistStorage.hidden = e.persisted;
}

async function persistStorage() {
  const kept = await store.persist();
  notice(kept ? "info" : "error", kept
    ? "The browser will keep this site's sessions when space runs low."
    : "The browser did not agree to keep this site's data (it may evict it when space runs low); export sessions you want to keep.");
  await showStorage();
}

async function refreshSessions() {
  showStorage();
  const seq = ++listSeq;
  try {
    const list = await store.list();
    if (seq !== listSeq) return; // a newer listing is on its way
    sessions = list;
  } catch (err) {
    showError("Could not list the sessions", err);
  }
  renderSessions();
}

let refreshTimer = 0;
/** Refreshes the session list soon: at most one listing per 120 ms however many saves there are. */
function refreshSessionsSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = 0;
    refreshSessions();
  }, 120);
}

function renderSessions() {
  if (renameRow?.isConnected && sessions.some((m) => m.id === renaming)) {
    // A title is being edited: redrawing would take its input away (and blur it).
    renderHeader();
    return;
  }
  const rows = sessions.map((meta) => {
    const li = h("li", "session");
    li.dataset.id = meta.id;
    if (current?.id === meta.id) li.setAttribute("aria-current", "true");
    if (meta.id === renaming) {
      renameRow = li;
      const form = h("form", "rename-form");
      const input = h("input", "rename-input");
      input.value = meta.title;
      input.setAttribute("aria-label", "Session title");
      form.append(input);
      const finish = async (save) => {
        if (renaming !== meta.id) return;
        renaming = null;
        renameRow = null;
        const title = input.value.trim();
        if (save && title && title !== meta.title) {
          try {
            await store.rename(meta.id, title);
          } catch (err) {
            showError("Rename failed", err);
          }
        }
        await refreshSessions();
        renderHeader();
      };
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        finish(true);
      });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Escape") finish(false);
      });
      input.addEventListener("blur", () => {
        if (input.isConnected) finish(true);
      });
      li.append(form);
      queueMicrotask(() => {
        input.focus();
        input.select();
      });
      return li;
    }
    const open = h("button", "session-open");
    open.type = "button";
    open.append(h("span", "session-title", meta.title));
    const tokens = meta.contextTokens ? ` · ${fmt(meta.contextTokens)} tokens` : "";
    open.append(h("span", "session-meta", `${plural(meta.messageCount, "message")}${tokens}`));
    if (meta.preview) open.title = meta.preview;
    open.addEventListener("click", () => switchSession(meta.id));
    li.append(open);
    if (deleting === meta.id) {
      const confirm = h("div", "session-confirm");
      confirm.append(h("span", null, "Delete this session?"));
      const yes = h("button", "session-delete-confirm danger", "Delete");
      yes.type = "button";
      yes.addEventListener("click", () => deleteSession(meta.id));
      const no = h("button", "session-delete-cancel", "Cancel");
      no.type = "button";
      no.addEventListener("click", () => {
        deleting = null;
        renderSessions();
      });
      confirm.append(yes, no);
      li.append(confirm);
      return li;
    }
    const actions = h("div", "session-actions");
    const rename = h("button", "session-rename", "Rename");
    rename.type = "button";
    rename.title = "Rename";
    rename.addEventListener("click", () => {
      renaming = meta.id;
      renameRow = null;
      deleting = null;
      renderSessions();
    });
    const del = h("button", "session-delete", "Delete");
    del.type = "button";
    del.title = "Delete";
    del.addEventListener("click", () => {
      deleting = meta.id;
      renaming = null;
      renderSessions();
    });
    actions.append(rename, del);
    li.append(actions);
    return li;
  });
  ui.sessionList.replaceChildren(...rows);
  renderHeader();
}

/** Sessions another tab saved while this one had no session open (loading one). */
const changedWhileOpening = new Set();

let renaming = null; // the id of the session whose title is being edited
let renameRow = null; // its row, kept across redraws
let deleting = null; // the id of the session asking for a confirmation

async function createSession() {
  try {
    const meta = await store.createSession({ title: NEW_TITLE, model: `${endpointProvider()}/${endpoint.modelId}` });
    await refreshSessions();
    await switchSession(meta.id);
  } catch (err) {
    showError("Could not create a session", err);
  }
}

async function deleteSession(id) {
  deleting = null;
  try {
    if (current?.id === id) await closeSession();
    await store.delete(id);
    await refreshSessions();
    if (!current || current.id === id) {
      if (sessions.length > 0) await switchSession(sessions[0].id);
      else await createSession();
    }
  } catch (err) {
    showError("Delete failed", err);
    await refreshSessions();
  }
}

function endpointProvider() {
  return endpoint?.local ? "local" : "openai-compatible";
}

/** openAiSummarizer against the endpoint; its errors are remembered (see the unhandledrejection listener). */
function summarizer(ep) {
  return rememberErrors(openAiSummarizer({ baseUrl: ep.baseUrl, apiKey: ep.apiKey, model: ep.modelId }));
}

/** A summarizer whose errors are remembered (see the unhandledrejection listener). */
function rememberErrors(summarize) {
  return (request) =>
    summarize(request).catch((err) => {
      if (err !== null && typeof err === "object") summarizerErrors.add(err);
      throw err;
    });
}

/**
 * Opens `id` (after closing the open session); serialized so that clicks never interleave.
 * `reapply`: this tab's messages of the session, whose saves may have been refused (see `reapplyLocal`).
 */
function switchSession(id, { reapply } = {}) {
  if (current?.id === id && opensPending === 0) return opening;
  return queueOpen(() => openSession(id, { reapply }));
}

let opensPending = 0; // session opens queued on `opening` and not done

/** Runs `task` (which opens a session) after the opens before it; a message sent meanwhile waits for it (see `submit`). */
function queueOpen(task) {
  opensPending++;
  opening = opening
    .then(task)
    .catch((err) => showError("Could not open the session", err))
    .finally(() => opensPending--);
  return opening;
}

/** Stops the open session's agent and detaches its compactor. */
async function closeSession() {
  const s = current;
  if (!s) return;
  current = null;
  s.closed = true;
  try {
    s.compactor.abort();
    s.agent.abort();
    s.agent.clearAllQueues();
    await s.agent.waitForIdle();
  } catch (err) {
    console.warn("closing the session", err);
  }
  s.unsubscribe();
  s.detach();
  // (a run it stopped was saved after its events stopped reaching the page: list the sessions again)
  refreshSessionsSoon();
}

let lastOpenedId = null;

async function openSession(id, { reapply } = {}) {
  await closeSession();
  if (lastOpenedId !== id) clearNotices(); // (a session loaded again keeps them)
  lastOpenedId = id;
  changedWhileOpening.delete(id);
  let messages = await store.load(id);
  if (reapply) messages = await reapplyLocal(id, messages, reapply);
  const model = piModel(endpoint);
  const s = {
    id,
    agent: null,
    compactor: null,
    detach: () => {},
    unsubscribe: () => {},
    closed: false,
    retryPending: false,
    manualCompacting: false,
    stateCompacting: false,
    contextTokens: 0,
    queued: [], // user messages queued with followUp, not yet in the transcript
    lastCompaction: null,
    errorEvents: 0,
    titled: false,
  };
  // On the AI SDK (a setting), the agent and the summarizer go through `ai`,
  // loaded only then (www/ai-sdk-agent.js).
  const aiSdk = endpoint.aiSdk ? await import("./ai-sdk-agent.js") : null;
  const aiModel = aiSdk?.aiSdkModel(endpoint);
  s.compactor = new Compactor({
    contextWindow: endpoint.contextWindow,
    model,
    settings: { reserveTokens: endpoint.reserveTokens, keepRecentTokens: endpoint.keepRecentTokens },
    summarize: aiSdk ? rememberErrors(aiSdk.aiSdkSummarizer(aiModel, { maxRetries: 0 })) : summarizer(endpoint),
    // the summarizer is the same model: its prompt must fit the same window
    summarizerContextWindow: Math.max(1_000, endpoint.contextWindow - endpoint.reserveTokens),
    summarizeTimeoutMs: 120_000,
    fallback: "extractive",
    onEvent: (event) => {
      if (aiSdk && event.type === "compaction_start") s.stateCompacting = true;
      if (aiSdk && event.type === "compaction_end") s.stateCompacting = false;
      onCompactorEvent(s, event);
    },
  });
  if (aiSdk) {
    s.agent = new aiSdk.AiSdkAgent({
      compactor: s.compactor,
      model: aiModel,
      store,
      sessionId: id,
      messages,
      systemPrompt: SYSTEM_PROMPT,
      toolDelayMs: endpoint.toolDelayMs,
      maxOutputTokens: model.maxTokens,
      backgroundAt: BACKGROUND_AT,
      onSaveError: (error) => onCompactorEvent(s, { type: "save_error", error }),
    });
    s.unsubscribe = s.agent.subscribe((event) => (event.type === "save_error" ? onCompactorEvent(s, event) : onAgentEvent(s, event)));
  } else {
    s.agent = new Agent({
      initialState: { systemPrompt: SYSTEM_PROMPT, model, tools: demoAgentTools({ delayMs: endpoint.toolDelayMs }), messages },
      getApiKey: () => endpoint.apiKey,
    });
    // The model can look up what a summary left out (search_history, read_history).
    s.agent.state.tools = [...s.agent.state.tools, ...historyTools(s.compactor, s.agent)];
    s.unsubscribe = s.agent.subscribe((event) => onAgentEvent(s, event));
    s.detach = s.compactor.attach(s.agent, {
      store,
      sessionId: id,
      backgroundAt: BACKGROUND_AT,
      onStateChange: (state) => {
        if (s.closed) return;
        s.stateCompacting = state.isCompacting;
        s.contextTokens = state.contextTokens;
        update(s);
      },
    });
  }
  current = s;
  if (changedWhileOpening.delete(id)) {
    // another tab saved it while it loaded: what was loaded may be older
    s.changedElsewhere = true;
    queueMicrotask(() => reopenIfChangedElsewhere(s));
  }
  if (endpoint.warning) notice("error", endpoint.warning);
  putSetting("lastSessionId", id).catch((err) => console.warn("could not remember the session", err));
  ui.body.dataset.session = id;
  ui.body.dataset.runtime = aiSdk ? "ai-sdk" : "pi"; // which agent the open session runs on
  renderSessions();
  update(s, { scroll: "bottom" });
}

// ---------------------------------------------------------------- agent and compactor events

function onAgentEvent(s, event) {
  if (s.closed) return;
  switch (event.type) {
    case "agent_start":
      s.retryPending = false;
      break;
    case "message_start":
      if (event.message.role === "user") {
        const i = s.queued.findIndex((q) => q === event.message);
        if (i >= 0) s.queued.splice(i, 1);
      }
      break;
    case "message_end":
      refreshSessionsSoon();
      break;
    case "agent_end":
      // The run is idle only once every agent_end listener (the compactor's
      // included) has settled.
      s.agent.waitForIdle().then(() => afterIdle(s));
      break;
  }
  update(s);
}

/** After a run went idle: a retry the compactor scheduled starts in a moment; notice when it does not. */
function afterIdle(s) {
  update(s);
  setTimeout(() => {
    if (s.closed) return;
    if (s.retryPending && !s.agent.state.isStreaming) s.retryPending = false;
    update(s);
    refreshSessionsSoon();
    reopenIfChangedElsewhere(s);
  }, 150);
}

/**
 * Loads the session again when another tab saved it (its saves from here
 * would be refused), with what this tab added meanwhile put back after
 * the other tab's messages: reload, reapply, save.
 */
function reopenIfChangedElsewhere(s) {
  if (!s.changedElsewhere || s.closed || current !== s || isBusy(s)) return;
  current = null;
  s.closed = true;
  s.unsubscribe();
  s.detach();
  switchSession(s.id, { reapply: s.agent.state.messages }).then(() => notice("info", "This session was changed in another tab; it has been reloaded."));
}

/**
 * `stored` (the session as another tab left it) with the messages of
 * `local` (this tab's array) it lacks appended and saved: the turn this tab
 * ran while its saves were refused. Only what follows the last of this
 * tab's messages that is stored comes back; this tab's summaries and
 * clearing markers do not (its compactor compacts again if it must), nor
 * does anything when no message of this tab is stored (the other tab
 * replaced the session: nothing to put it after).
 */
async function reapplyLocal(id, stored, local) {
  const key = (m) => JSON.stringify(m);
  for (let attempt = 1; ; attempt++) {
    const there = new Set(stored.map(key));
    const last = local.findLastIndex((m) => there.has(key(m)));
    if (last < 0) return stored;
    const missing = local.slice(last + 1).filter((m) => m.role !== "compactionSummary" && m.role !== "toolOutputCleared");
    if (missing.length === 0) return stored;
    const next = [...stored, ...missing];
    const what = `this tab's last ${plural(missing.length, "message")}`;
    try {
      await store.save(id, next);
    } catch (err) {
      if (err instanceof ConflictError && attempt < 3) {
        stored = await store.load(id); // saved elsewhere once more meanwhile
        continue;
      }
      showError(`Could not keep ${what}`, err);
      return stored;
    }
    notice("info", `The session was changed in another tab: ${what} ${missing.length === 1 ? "was" : "were"} added after its messages.`);
    return next;
  }
}

function onCompactorEvent(s, event) {
  if (s.closed) return;
  switch (event.type) {
    case "compaction_start":
      break;
    case "compaction_end": {
      if (event.result) {
        s.lastCompaction = {
          reason: event.reason,
          before: event.result.tokensBefore,
          after: event.result.tokensAfter,
          by: event.result.summarizedBy,
          fallbackReason: event.result.fallbackReason,
        };
        if (event.result.summarizedBy === "extractive") {
          notice("info", `The summarizer failed (${event.result.fallbackReason ?? "no reason given"}); an extractive summary was used.`);
        }
        if (event.willRetry) s.retryPending = true;
      }
      if (event.errorMessage) {
        s.errorEvents++;
        notice("error", event.errorMessage);
      }
      refreshSessionsSoon();
      break;
    }
    case "save_error":
      if (event.error instanceof ConflictError) {
        s.changedElsewhere = true;
        notice("error", "This session was changed in another tab: it will be reloaded when the agent is idle.");
      } else showError("Saving the session failed", event.error);
      break;
    case "hook_error":
      showError(`The ${event.hook} hook failed`, event.error);
      break;
  }
  update(s);
}

// ---------------------------------------------------------------- sending

async function submit() {
  // A session being opened (a switch, the reload after another tab's save,
  // new settings, from the moment "Save" is pressed) takes the message
  // once it is open.
  await savingSettings.catch(() => undefined);
  while (opensPending > 0) await opening;
  const s = current;
  const text = ui.input.value;
  if (!s || !text.trim() || isCompacting(s)) return;
  const command = /^\/compact(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (command) {
    ui.input.value = "";
    await manualCompact(s, command[1]?.trim() || undefined);
    return;
  }
  ui.input.value = "";
  const message = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
  notices.splice(0, notices.length, ...notices.filter((n) => n.kind !== "error"));
  renderNotices();
  nameAfterFirstMessage(s, text);
  if (isBusy(s)) {
    s.queued.push(message);
    s.agent.followUp(message);
    update(s);
    return;
  }
  try {
    const running = s.agent.prompt(message);
    update(s, { scroll: "bottom" });
    await running;
  } catch (err) {
    if (/already processing/i.test(err?.message ?? "")) {
      s.queued.push(message);
      s.agent.followUp(message);
      update(s);
    } else showError("The agent failed", err);
  }
}

/** A session still called "New session" takes its first message as its title. */
function nameAfterFirstMessage(s, text) {
  if (s.titled) return;
  s.titled = true;
  const meta = sessions.find((m) => m.id === s.id);
  if (!meta || meta.title !== NEW_TITLE) return;
  const title = text.replace(/\s+/g, " ").trim().slice(0, 60);
  store
    .rename(s.id, title)
    .then(refreshSessions)
    .catch((err) => console.warn("could not name the session", err));
}

/** `/compact [instructions]`: compactor.compact, then the agent's messages and the store. */
async function manualCompact(s, customInstructions) {
  if (s.agent.state.isStreaming || s.retryPending) {
    notice("error", "Wait for the agent to finish before compacting.");
    return;
  }
  s.manualCompacting = true;
  update(s);
  const errorsBefore = s.errorEvents;
  try {
    // A compaction in the background ends first (one at a time); its
    // summary goes in, and the manual one summarizes on from there.
    await s.compactor.waitForBackground();
    const ready = s.compactor.takeBackground(s.agent.state.messages);
    if (ready) {
      s.agent.state.messages = ready.messages;
      // saved now: the manual compaction may find nothing more to summarize
      await store.save(s.id, s.agent.state.messages);
    }
    const before = s.agent.state.messages;
    const out = await s.compactor.compact(before, { reason: "manual", customInstructions });
    if (s.closed) return;
    s.agent.state.messages = out.messages;
    await store.save(s.id, s.agent.state.messages);
  } catch (err) {
    // compaction_end already reported it (with pi's "Compaction failed: " prefix)
    if (!s.closed && s.errorEvents === errorsBefore) showError("Compaction failed", err);
  } finally {
    s.manualCompacting = false;
    if (!s.closed) update(s, { scroll: "bottom" });
    refreshSessionsSoon();
  }
}

async function undoCompaction() {
  const s = current;
  if (!s || isBusy(s) || s.compactor.isCompacting) return;
  const messages = s.agent.state.messages;
  const next = removeLastCompaction(messages);
  if (next === messages) return;
  s.agent.state.messages = next;
  s.lastCompaction = null;
  try {
    await store.save(s.id, s.agent.state.messages, { replace: true });
  } catch (err) {
    showError("Saving the session failed", err);
  }
  update(s);
  refreshSessionsSoon();
}

// ---------------------------------------------------------------- rendering

let renderQueued = false;
let scrollRequest = null;

/** Updates the cheap state now and schedules the lists for the next frame. */
function update(s = current, { scroll } = {}) {
  if (s !== current || !s) return;
  if (scroll) scrollRequest = scroll;
  const busy = renderState(s);
  if (wasBusy && !busy) {
    // Back to idle: draw everything now, then say so (data-settled), so that
    // whoever waits for it (the tests) reads the final page.
    renderQueued = false;
    renderLists(s);
    ui.body.dataset.settled = String(++settledCount);
  } else if (!renderQueued) {
    renderQueued = true;
    const draw = () => {
      if (!renderQueued) return;
      renderQueued = false;
      if (current) renderLists(current);
    };
    requestAnimationFrame(draw);
    setTimeout(draw, 100); // frames may be throttled (a hidden tab)
  }
  wasBusy = busy;
}

function renderHeader() {
  const meta = sessions.find((m) => m.id === current?.id);
  ui.title.textContent = meta?.title ?? (current ? "…" : "No session");
  if (endpoint) {
    const where = endpoint.local ? "local model" : new URL(endpoint.baseUrl).host;
    ui.endpoint.textContent = `${endpoint.modelId} @ ${where} · ${fmt(endpoint.contextWindow)}-token window${endpoint.aiSdk ? " · AI SDK" : ""}`;
  }
}

/** Busy flags, input, indicator and the stats bar: cheap, done on every event. Returns whether busy. */
function renderState(s) {
  const compacting = isCompacting(s);
  const streaming = s.agent.state.isStreaming;
  const busy = isBusy(s);
  ui.body.dataset.compacting = String(compacting);
  ui.body.dataset.streaming = String(streaming);
  ui.body.dataset.busy = String(busy);

  // A compaction in the background only says so; the input stays enabled.
  const background = !compacting && s.compactor.isCompactingInBackground;
  ui.body.dataset.background = String(background);
  ui.compactingText.textContent = background ? "Summarizing older messages in the background…" : "Compacting context…";
  ui.compacting.hidden = !compacting && !background;
  ui.input.disabled = compacting;
  ui.send.disabled = compacting;
  ui.stop.hidden = !streaming || compacting;
  const messages = s.agent.state.messages;
  // (not while a summary is written in the background either: it summarizes
  // the array with the last summary in, and would be dropped, the undo too)
  ui.undo.disabled = busy || s.compactor.isCompacting || !messages.some((m) => m.role === "compactionSummary");

  // stats bar
  let tokens;
  try {
    tokens = s.compactor.contextTokens(messages);
  } catch {
    tokens = s.contextTokens;
  }
  const window = s.compactor.contextWindow;
  const threshold = window - s.compactor.settings.reserveTokens;
  ui.stats.dataset.tokens = String(Math.round(tokens));
  ui.stats.dataset.window = String(window);
  ui.stats.dataset.threshold = String(threshold);
  ui.stats.classList.toggle("over", tokens > threshold);
  ui.meterFill.style.width = `${Math.min(100, (tokens / window) * 100).toFixed(2)}%`;
  ui.meterThreshold.style.left = `${((threshold / window) * 100).toFixed(2)}%`;
  ui.statTokens.textContent = `${fmt(tokens)} / ${fmt(window)} tokens`;
  ui.statThreshold.textContent = `compacts above ${fmt(threshold)}`;
  const summaries = messages.filter((m) => m.role === "compactionSummary").length;
  ui.statMessages.textContent = `${plural(messages.length - summaries, "message")} · ${plural(summaries, "compaction")}`;
  const last = s.lastCompaction;
  ui.statLast.textContent = last
    ? `last compaction (${last.reason}): ${fmt(last.before)} → ${fmt(last.after)} tokens${last.by === "summarizer" ? "" : ` (${last.by} summary)`}`
    : "";
  return busy;
}

const rowCache = new WeakMap(); // message object → its row (messages are never mutated)

function renderLists(s) {
  const list = ui.conversation;
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const messages = s.agent.state.messages;
  const display = agentMessagesToChatMessages(messages, { divider: true });
  const rows = [];
  for (const item of display) {
    if (item.role === "compactionDivider") {
      rows.push(dividerRow(item));
      continue;
    }
    let row = rowCache.get(item);
    if (!row) {
      row = messageRow(item, messages);
      rowCache.set(item, row);
    }
    rows.push(row);
  }
  const streaming = s.agent.state.streamingMessage;
  if (streaming && streaming.role === "assistant") rows.push(messageRow(streaming, messages, { streaming: true }));
  for (const q of s.queued) rows.push(messageRow(q, messages, { queued: true }));
  if (s.agent.state.isStreaming && !streaming && !isCompacting(s)) {
    const tools = s.agent.state.pendingToolCalls?.size ?? 0;
    rows.push(h("li", "working", tools > 0 ? `Running ${plural(tools, "tool call")}…` : "The agent is working…"));
  }

  const same = rows.length === list.children.length && rows.every((r, i) => list.children[i] === r);
  if (!same) list.replaceChildren(...rows);
  if (scrollRequest === "bottom" || nearBottom) list.scrollTop = list.scrollHeight;
  scrollRequest = null;

  if (!ui.modelView.hidden) renderModelView(s);
}

function dividerRow(divider) {
  const li = h("li", "divider");
  li.dataset.role = "compactionDivider";
  li.append(h("span", "divider-text", `Context compacted (${fmt(divider.tokensBefore)} tokens before) · the model continues from a summary`));
  return li;
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("\n");
}

function toolCallLabel(call) {
  const args = call.arguments ?? {};
  const main = args.path ?? args.command ?? Object.values(args)[0];
  return main === undefined ? call.name : `${call.name} ${typeof main === "string" ? main : JSON.stringify(main)}`;
}

function messageRow(message, messages, { streaming = false, queued = false } = {}) {
  const li = h("li", `msg ${message.role}`);
  li.dataset.role = message.role;
  if (streaming) li.classList.add("streaming");
  if (queued) {
    li.classList.add("queued");
    li.dataset.queued = "true";
  }
  switch (message.role) {
    case "user": {
      li.append(h("div", "who", queued ? "You (queued)" : "You"));
      const body = h("div", "text");
      body.textContent = textOf(message.content);
      li.append(body);
      break;
    }
    case "assistant": {
      li.append(h("div", "who", streaming ? "Agent (typing…)" : "Agent"));
      for (const block of message.content ?? []) {
        if (block.type === "text" && block.text) {
          const body = h("div", "text");
          appendRichText(body, block.text);
          li.append(body);
        } else if (block.type === "thinking" && block.thinking) {
          li.append(h("div", "thinking", block.thinking));
        } else if (block.type === "toolCall") {
          const call = h("div", "tool-call");
          call.append(h("span", "tool-icon", "▸"), h("code", null, toolCallLabel(block)));
          li.append(call);
        }
      }
      if (message.stopReason === "error" || message.stopReason === "aborted") {
        li.classList.add("error");
        li.dataset.stopReason = message.stopReason;
        li.append(h("div", "error-text", message.stopReason === "aborted" ? "Stopped." : `Error: ${message.errorMessage ?? "the request failed"}`));
      }
      break;
    }
    case "toolResult": {
      const text = textOf(message.content);
      li.append(collapsedOutput(text, message.isError, h("code", null, message.toolName)));
      break;
    }
    case "bashExecution": {
      li.classList.add("toolResult");
      const failed = message.exitCode !== 0 && message.exitCode !== undefined;
      li.append(collapsedOutput(message.output ?? "", failed, h("code", null, `$ ${message.command}`)));
      break;
    }
    case "branchSummary": {
      li.append(h("div", "who", "Branch summary"));
      li.append(h("div", "text", message.summary));
      break;
    }
    case "custom": {
      li.append(h("div", "who", message.customType ?? "Note"));
      li.append(h("div", "text", textOf(message.content)));
      break;
    }
    default:
      li.append(h("div", "who", message.role));
  }
  return li;
}

/** A tool's output as one line (✓/✗, label, size) that opens to the first few KB. */
function collapsedOutput(text, isError, label) {
  const details = h("details", "tool-result");
  const summary = h("summary");
  const lines = text ? text.split("\n").length : 0;
  summary.append(
    h("span", isError ? "tool-status error" : "tool-status", isError ? "✗" : "✓"),
    label,
    h("span", "muted", ` → ${fmt(lines)} lines · ${(text.length / 1024).toFixed(1)} KB`),
  );
  details.append(summary);
  details.addEventListener("toggle", () => {
    if (details.open && details.children.length === 1) {
      const cut = text.length > TOOL_PREVIEW_CHARS;
      details.append(h("pre", "tool-output", cut ? `${text.slice(0, TOOL_PREVIEW_CHARS)}\n… (${fmt(text.length - TOOL_PREVIEW_CHARS)} more characters)` : text));
    }
  });
  return details;
}

// ---------------------------------------------------------------- what the model sees

function renderModelView(s) {
  const messages = s.agent.state.messages;
  let llm;
  try {
    llm = convertToLlm(transformContext(messages));
  } catch (err) {
    ui.modelList.replaceChildren(h("li", "error-text", `convertToLlm failed: ${err.message}`));
    return;
  }
  const tools = DEMO_TOOLS.map((t) => `- ${t.name}: ${t.description}`).join("\n");
  ui.modelSystem.textContent = `${SYSTEM_PROMPT}\n\nTools:\n${tools}`;
  const tokens = s.compactor.contextTokens(messages);
  ui.modelCount.textContent = `${llm.length} messages · ~${fmt(tokens)} tokens`;
  ui.modelCount.dataset.messages = String(llm.length);
  const rows = llm.map((m) => {
    let row = modelRowCache.get(m);
    if (!row) {
      row = modelRow(m);
      modelRowCache.set(m, row);
    }
    return row;
  });
  const list = ui.modelList;
  if (rows.length !== list.children.length || rows.some((r, i) => list.children[i] !== r)) list.replaceChildren(...rows);
}

const modelRowCache = new WeakMap(); // LLM message object → its row (convertToLlm keeps the objects)

function modelRow(m) {
  const li = h("li", `llm ${m.role}`);
  li.dataset.role = m.role;
  const text = m.role === "assistant" ? m.content.filter((b) => b.type === "text").map((b) => b.text).join("\n") : textOf(m.content);
  if (m.role === "user" && text.startsWith(SUMMARY_PREAMBLE)) {
    li.classList.add("summary");
    li.dataset.summary = "true";
  }
  const head = h("div", "who", m.role === "toolResult" ? `toolResult · ${m.toolName}` : m.role);
  li.append(head);
  if (text) {
    const full = li.classList.contains("summary") || text.length <= MODEL_PREVIEW_CHARS;
    const body = h("pre", "llm-text", full ? text : `${text.slice(0, MODEL_PREVIEW_CHARS)}…`);
    li.append(body);
    if (!full) {
      const more = h("button", "more", `show all ${fmt(text.length)} characters`);
      more.type = "button";
      more.addEventListener("click", () => {
        body.textContent = text;
        more.remove();
      });
      li.append(more);
    }
  }
  if (m.role === "assistant") {
    for (const b of m.content) if (b.type === "toolCall") li.append(h("code", "tool-call", `${b.name}(${JSON.stringify(b.arguments)})`));
  }
  return li;
}

function toggleModelView() {
  const show = ui.modelView.hidden;
  ui.modelView.hidden = !show;
  ui.toggleModel.setAttribute("aria-pressed", String(show));
  ui.body.classList.toggle("with-model-view", show);
  if (show && current) renderModelView(current);
}

// ---------------------------------------------------------------- settings dialog

function fillSettingsForm(values) {
  ui.setBaseUrl.value = values.baseUrl ?? "";
  ui.setModel.value = values.model ?? "";
  ui.setApiKey.value = values.apiKey ?? "";
  ui.setContextWindow.value = values.contextWindow ?? "";
  ui.setReserve.value = values.reserveTokens ?? "";
  ui.setKeep.value = values.keepRecentTokens ?? "";
  ui.setAiSdk.checked = values.aiSdk === true;
  ui.settingsError.hidden = true;
  describeAuto();
}

function describeAuto() {
  const window = Number(ui.setContextWindow.value) || (ui.setBaseUrl.value ? DEFAULT_WINDOW : endpoint?.local ? endpoint.contextWindow : DEFAULT_WINDOW);
  const auto = autoCompaction(window);
  ui.settingsAuto.textContent = `Auto for a ${fmt(window)}-token window: reserve ${fmt(auto.reserveTokens)}, keep ${fmt(auto.keepRecentTokens)} recent tokens. The local model's window comes from its /config endpoint.`;
}

function readSettingsForm() {
  const int = (input, name) => {
    const raw = input.value.trim();
    if (raw === "") return null;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a whole number`);
    return n;
  };
  const baseUrl = ui.setBaseUrl.value.trim();
  if (baseUrl) {
    let url;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError("Base URL must be an absolute URL, e.g. https://api.openai.com/v1");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("Base URL must be http(s)");
  }
  const values = {
    baseUrl,
    model: ui.setModel.value.trim(),
    apiKey: ui.setApiKey.value,
    contextWindow: int(ui.setContextWindow, "Context window"),
    reserveTokens: int(ui.setReserve, "Reserve tokens"),
    keepRecentTokens: int(ui.setKeep, "Keep recent tokens"),
    aiSdk: ui.setAiSdk.checked,
  };
  if (baseUrl && !values.model) throw new TypeError("Model is required for another endpoint");
  if (baseUrl && !values.contextWindow) throw new TypeError("Context window is required for another endpoint");
  return values;
}

/** Settles once the last "Save" of the settings has reopened the session (a message sent meanwhile waits for it). */
let savingSettings = Promise.resolve();

function saveSettings() {
  savingSettings = saveSettingsNow();
  return savingSettings;
}

async function saveSettingsNow() {
  let values;
  try {
    values = readSettingsForm();
    const window = values.contextWindow ?? (values.baseUrl ? DEFAULT_WINDOW : (await localModelWindow()) ?? DEFAULT_WINDOW);
    const auto = autoCompaction(window);
    resolveSettings(
      { reserveTokens: values.reserveTokens ?? auto.reserveTokens, keepRecentTokens: values.keepRecentTokens ?? auto.keepRecentTokens },
      { contextWindow: window },
    );
  } catch (err) {
    ui.settingsError.textContent = err.message;
    ui.settingsError.hidden = false;
    return;
  }
  try {
    await putSetting("endpoint", values);
  } catch (err) {
    ui.settingsError.textContent = `Could not save the settings: ${err.message}`;
    ui.settingsError.hidden = false;
    return;
  }
  ui.settingsDialog.close();
  savedEndpoint = values;
  // The session opens again with the new endpoint (openSession closes it
  // first); a message sent meanwhile waits for it, not for the old one.
  const reopen = current?.id;
  await queueOpen(async () => {
    endpoint = await resolveEndpoint(savedEndpoint);
    renderHeader();
    if (reopen) await openSession(reopen);
  });
}

// ---------------------------------------------------------------- import / export

async function importSession(file) {
  try {
    const meta = await store.importJsonl(await file.text());
    await refreshSessions();
    await switchSession(meta.id);
  } catch (err) {
    showError(`Could not import ${file.name}`, err);
  }
}

async function exportSession() {
  const s = current;
  if (!s) return;
  try {
    const text = await store.exportJsonl(s.id);
    const meta = sessions.find((m) => m.id === s.id);
    const name = `${(meta?.title ?? "session").replace(/[^\w.-]+/g, "-").slice(0, 40) || "session"}.jsonl`;
    const url = URL.createObjectURL(new Blob([text], { type: "application/jsonl" }));
    const a = h("a");
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    showError("Export failed", err);
  }
}

// ---------------------------------------------------------------- wiring

function wire() {
  ui.composer.addEventListener("submit", (e) => {
    e.preventDefault();
    submit().catch((err) => showError("Sending failed", err));
  });
  ui.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.stop.addEventListener("click", () => current?.agent.abort());
  ui.undo.addEventListener("click", () => undoCompaction().catch((err) => showError("Undo failed", err)));
  ui.newSession.addEventListener("click", () => createSession());
  ui.toggleModel.addEventListener("click", toggleModelView);
  ui.importButton.addEventListener("click", () => ui.importFile.click());
  ui.importFile.addEventListener("change", () => {
    const file = ui.importFile.files?.[0];
    ui.importFile.value = "";
    if (file) importSession(file);
  });
  ui.exportButton.addEventListener("click", () => exportSession());
  ui.persistStorage.addEventListener("click", () => persistStorage().catch((err) => showError("Keep data", err)));
  ui.openSettings.addEventListener("click", () => {
    fillSettingsForm(savedEndpoint);
    ui.settingsDialog.showModal();
  });
  ui.settingsCancel.addEventListener("click", () => ui.settingsDialog.close());
  ui.settingsLocal.addEventListener("click", () => fillSettingsForm(EMPTY_ENDPOINT));
  ui.setContextWindow.addEventListener("input", describeAuto);
  ui.setBaseUrl.addEventListener("input", describeAuto);
  ui.settingsForm.addEventListener("submit", (e) => {
    e.preventDefault();
    saveSettings().catch((err) => showError("Settings", err));
  });
}

async function main() {
  wire();
  const saved = await getSetting("endpoint").catch(() => undefined);
  savedEndpoint = { ...EMPTY_ENDPOINT, ...(saved ?? {}) };
  endpoint = await resolveEndpoint(savedEndpoint);
  store = await SessionStore.open({ name: SESSION_DB });
  store.onChange((event) => {
    refreshSessionsSoon();
    const s = current;
    if (!s || event.sessionId !== s.id) {
      // (a session being opened right now is loaded again once it is open)
      if (event.type === "saved") changedWhileOpening.add(event.sessionId);
      return;
    }
    if (event.type === "deleted") {
      closeSession().then(refreshSessions).then(() => (sessions[0] ? switchSession(sessions[0].id) : createSession()));
    } else if (event.type === "saved") {
      // another tab changed this session: show its version (once this tab is idle)
      s.changedElsewhere = true;
      reopenIfChangedElsewhere(s);
    }
  });
  await refreshSessions();
  const last = await getSetting("lastSessionId").catch(() => undefined);
  const target = sessions.find((m) => m.id === last) ?? sessions[0];
  if (target) await switchSession(target.id);
  else await createSession();
  ui.body.dataset.ready = "true";
}

// Exposed for the console and the end-to-end tests (read-only use).
window.demo = {
  get session() {
    return current ? { id: current.id, messages: current.agent.state.messages } : null;
  },
  get store() {
    return store;
  },
  get endpoint() {
    return endpoint;
  },
  ConflictError,
};

main().catch((err) => {
  showError("The demo could not start", err);
  ui.body.dataset.ready = "error";
});
