// One small browser abstraction for the browser suites, so that each suite
// is written once and runs in Chromium, Firefox and WebKit:
//
//   for (const engine of ENGINES) describe(engine, () => { ... launch(engine) ... });
//
// Chromium is driven by playwright-core (Debian's /usr/bin/chromium, see
// chromium.mjs), Firefox by puppeteer-core over WebDriver BiDi
// (/usr/bin/firefox-esr, no driver), WebKit by selenium-webdriver through
// WebKitGTK's WebKitWebDriver and MiniBrowser (which has no headless mode:
// when there is no $DISPLAY the driver is started under `xvfb-run -a`).
// `ENGINES=chromium,firefox` narrows the engines a run uses.
//
// What a suite gets: `launch(engine, { profile })` → a Browser with
// newPage(), newIsolatedPage(), pages(), close(), crash(page), kill() (the
// browser process, by its pid), setQuota(page, bytes), and `can` (what the
// engine allows); a Page with goto(url), evaluate(fn, arg),
// waitForFunction(fn, arg, { timeout }), onProblem(cb) (uncaught errors,
// unhandled rejections and console.error, as "pageerror: …" and
// "console.error: …" strings), flush() and close(). Where an engine cannot
// do something, `can` says so and the suite says what it does instead.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { join } from "node:path";
import { CHROMIUM } from "./chromium.mjs";

export const ALL_ENGINES = ["chromium", "firefox", "webkit"];

/** The engines this run uses: $ENGINES (comma-separated), else all three. */
export const ENGINES = (() => {
  const wanted = (process.env.ENGINES ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (wanted.length === 0) return ALL_ENGINES.slice();
  const unknown = wanted.filter((e) => !ALL_ENGINES.includes(e));
  if (unknown.length) throw new Error(`ENGINES: unknown engine(s) ${unknown.join(", ")} (known: ${ALL_ENGINES.join(", ")})`);
  return wanted;
})();

export const FIREFOX_BINARY = "/usr/bin/firefox-esr";
export const WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Launches `engine`. `profile`: a directory for an on-disk profile (Chromium
 * and Firefox keep IndexedDB there). Omitted: Chromium gets an incognito
 * context (storage in memory), Firefox a temporary profile removed at
 * close. WebKit's MiniBrowser under automation keeps website data for the
 * session only, whatever the profile; see `can.persistentProfile`.
 */
export async function launch(engine, options = {}) {
  switch (engine) {
    case "chromium":
      return ChromiumBrowser.launch(options);
    case "firefox":
      return FirefoxBrowser.launch(options);
    case "webkit":
      return WebKitBrowser.launch(options);
    default:
      throw new Error(`launch: unknown engine ${JSON.stringify(engine)} (known: ${ALL_ENGINES.join(", ")})`);
  }
}

// ---------------------------------------------------------------------------
// Processes: the pids below a browser, to end a page's content process or
// the browser itself by its id (Linux /proc).

function processTable() {
  const table = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean);
      table.push({ pid: Number(name), ppid, cmdline });
    } catch {
      // the process ended while being read
    }
  }
  return table;
}

/** Every process below `root` (not `root` itself), with its command line. */
export function descendants(root) {
  const table = processTable();
  const out = [];
  const queue = [root];
  while (queue.length) {
    const parent = queue.shift();
    for (const p of table) {
      if (p.ppid === parent) {
        out.push(p);
        queue.push(p.pid);
      }
    }
  }
  return out;
}

function killPid(pid, signal = "SIGKILL") {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pids, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pids.every((pid) => !existsPid(pid))) return;
    await sleep(20);
  }
}

function existsPid(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie has ended
  } catch {
    return false;
  }
}

/** SIGKILLs `browser.pid` and waits until it is gone; its pages are gone too. */
async function killBrowser(browser) {
  if (!browser.pid || !existsPid(browser.pid)) throw new Error(`${browser.engine}: no browser process to kill`);
  killPid(browser.pid);
  await waitGone([browser.pid]);
  browser.openPages.clear();
  return `browser process ended (SIGKILL pid ${browser.pid})`;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------
// Problems: every driver reports a page's uncaught errors, unhandled
// rejections and console.error the same way.

class Problems {
  constructor() {
    this.listeners = [];
  }
  on(cb) {
    this.listeners.push(cb);
  }
  emit(text) {
    for (const cb of this.listeners) cb(text);
  }
}

// ---------------------------------------------------------------------------
// Chromium: playwright-core.

class ChromiumBrowser {
  static async launch({ profile } = {}) {
    const { chromium } = await import("playwright-core");
    const self = new ChromiumBrowser();
    self.engine = "chromium";
    self.can = {
      crash: "renderer", // DevTools' Page.crash kills the page's renderer
      quota: true, // DevTools' Storage.overrideQuotaForOrigin
      persistentProfile: true,
    };
    const before = new Set(descendants(process.pid).map((p) => p.pid));
    if (profile) {
      // A persistent profile: IndexedDB on disk, as in a real browser.
      self.context = await chromium.launchPersistentContext(profile, { ...CHROMIUM });
    } else {
      // An incognito context (storage in memory), as the suites had before.
      self.browser = await chromium.launch(CHROMIUM);
      self.context = await self.browser.newContext();
    }
    // Playwright does not give the process: the chromium it started.
    self.pid = descendants(process.pid).find((p) => !before.has(p.pid) && /chrom(e|ium)$/.test(p.cmdline[0] ?? ""))?.pid;
    self.openPages = new Set();
    self.notes = []; // what the abstraction did that a suite should report
    return self;
  }

  async newPage() {
    const page = new ChromiumPage(this, await this.context.newPage());
    this.openPages.add(page);
    return page;
  }

  pages() {
    return [...this.openPages];
  }

  /** A page in a browser context of its own (its own storage), `viewport` { width, height }. */
  async newIsolatedPage({ viewport } = {}) {
    if (!this.browser) throw new Error("chromium: newIsolatedPage needs a browser launched without a profile");
    const context = await this.browser.newContext(viewport ? { viewport } : {});
    const page = new ChromiumPage(this, await context.newPage());
    page.ownContext = context;
    this.openPages.add(page);
    return page;
  }

  async crash(page) {
    const cdp = await this.context.newCDPSession(page.raw);
    const crashed = new Promise((resolve) => page.raw.once("crash", resolve));
    cdp.send("Page.crash").catch(() => {}); // never answers: the renderer is gone
    let timer;
    await Promise.race([
      crashed,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("Page.crash: the page did not crash within 60 s")), 60_000);
      }),
    ]).finally(() => clearTimeout(timer));
    await page.close();
    return "renderer crashed (DevTools Page.crash)";
  }

  /** Ends the browser process by its pid (SIGKILL), as a crash or a power cut would. */
  async kill() {
    return killBrowser(this);
  }

  /** Sets the page origin's storage quota (bytes; undefined: the default). */
  async setQuota(page, bytes) {
    const cdp = await this.context.newCDPSession(page.raw);
    const origin = new URL(page.raw.url()).origin;
    await cdp.send("Storage.overrideQuotaForOrigin", bytes === undefined ? { origin } : { origin, quotaSize: bytes });
  }

  async close() {
    await this.context?.close().catch(() => {});
    await this.browser?.close().catch(() => {});
  }
}

// What a Chromium page (Playwright) and a Firefox page (puppeteer) do the
// same way: both drivers' page objects have these methods.
class DriverPage {
  constructor(browser, raw) {
    this.browser = browser;
    this.raw = raw;
    this.problems = new Problems();
    raw.on("console", (msg) => {
      if (msg.type() === "error") this.problems.emit(`console.error: ${msg.text()}`);
    });
  }
  onProblem(cb) {
    this.problems.on(cb);
  }
  async flush() {}
  url() {
    return this.raw.url();
  }
  async goto(url) {
    await this.raw.goto(url);
  }
  async evaluate(fn, arg) {
    return this.raw.evaluate(fn, arg);
  }
  async screenshot(options) {
    await this.raw.screenshot(options);
  }
  async reload() {
    await this.raw.reload();
  }
  async close() {
    this.browser.openPages.delete(this);
    await this.raw.close().catch(() => {});
    await this.ownContext?.close().catch(() => {});
  }
}

class ChromiumPage extends DriverPage {
  constructor(browser, raw) {
    super(browser, raw);
    raw.on("pageerror", (err) => this.problems.emit(`pageerror: ${err.message}`));
  }
  async waitForFunction(fn, arg, { timeout = 30_000, polling } = {}) {
    await this.raw.waitForFunction(fn, arg, polling ? { timeout, polling } : { timeout });
  }
  /** Playwright's own locator (fill, press, click, count, first, textContent, …). */
  locator(selector) {
    return this.raw.locator(selector);
  }
}

// ---------------------------------------------------------------------------
// Firefox: puppeteer-core over WebDriver BiDi.

const FIREFOX_PREFS = {
  // Background tabs' timers are not slowed to one a second (two-tab tests).
  "dom.min_background_timeout_value": 4,
  "dom.timeout.enable_budget_timer_throttling": false,
  // navigator.storage.persist() asks the user in Firefox; under automation
  // no one answers: the testing prefs answer "allow", as a user would.
  "dom.storageManager.prompt.testing": true,
  "dom.storageManager.prompt.testing.allow": true,
};

// Messages Firefox itself logs about a page's requests (not the page's errors).
const FIREFOX_NOTICE = /^(Cross-Origin Request (Blocked|Warning):|Content-Security-Policy:|Loading (failed for|module from))/;

class FirefoxBrowser {
  static async launch({ profile, prefs } = {}) {
    const self = new FirefoxBrowser();
    self.engine = "firefox";
    self.can = {
      // No DevTools crash command: the page's content process is ended by
      // its pid (IndexedDB lives in the parent process, as in Chromium).
      crash: "content process",
      quota: false,
      // A fixed storage limit for the whole profile, set at launch:
      // launch("firefox", { prefs: { "dom.quotaManager.temporaryStorage.fixedLimit": kb } }).
      fixedQuota: true,
      persistentProfile: true,
    };
    // Extra preferences for this launch (e.g. a fixed storage limit).
    self.prefs = { ...FIREFOX_PREFS, ...prefs };
    self.ownProfile = profile ? null : mkdtempSync(join(os.tmpdir(), "engines-firefox-"));
    self.profile = profile ?? self.ownProfile;
    self.openPages = new Set();
    self.notes = [];
    await self.start();
    return self;
  }

  async start() {
    const puppeteer = (await import("puppeteer-core")).default;
    this.browser = await puppeteer.launch({
      browser: "firefox",
      executablePath: FIREFOX_BINARY,
      headless: true,
      userDataDir: this.profile,
      extraPrefsFirefox: this.prefs,
      protocolTimeout: 600_000,
      // When a crash trial takes Firefox down with its content processes,
      // its crash reporter would otherwise open a window (under xvfb) that
      // no one closes, and the browser's process never goes away.
      env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: "1" },
    });
    this.pid = this.browser.process()?.pid;
  }

  contentProcesses() {
    // Firefox rewrites its argv into one string: "… -contentproc … tab".
    return descendants(this.pid).filter((p) => /\s-contentproc\s.*\stab$/.test(p.cmdline.join(" ")));
  }

  /**
   * After its content processes were killed, Firefox itself now and then
   * exits too (seen about once in 40 trials: "Protocol error
   * (browsingContext.create): Target closed" on the next page). The profile
   * is on disk: the browser is started again on it, and `notes` says so.
   */
  async revive(error) {
    if (!this.crashed) throw error ?? new Error("firefox: the browser is gone (not after a crash)");
    this.crashed = false;
    this.notes.push(`Firefox exited after its content processes were killed (${error?.message ?? "gone"}); restarted on the same profile`);
    this.openPages.clear();
    await waitGone([this.pid], 15_000);
    if (existsPid(this.pid)) killPid(this.pid);
    await this.start();
  }

  async newPage() {
    let raw;
    try {
      if (!this.browser.connected || !existsPid(this.pid)) throw new Error("the browser process is gone");
      raw = await this.browser.newPage({ type: "window" });
    } catch (e) {
      await this.revive(e);
      raw = await this.browser.newPage({ type: "window" });
    }
    const page = new FirefoxPage(this, raw);
    this.openPages.add(page);
    return page;
  }

  pages() {
    return [...this.openPages];
  }

  /** A page in a browser context of its own (its own storage), `viewport` { width, height }. */
  async newIsolatedPage({ viewport } = {}) {
    const context = await this.browser.createBrowserContext();
    const page = new FirefoxPage(this, await context.newPage());
    page.ownContext = context;
    if (viewport) await page.raw.setViewport(viewport);
    this.openPages.add(page);
    return page;
  }

  /**
   * Ends the web content processes (SIGKILL by pid): the nearest thing to a
   * renderer crash. Every page open in the browser crashes with them.
   */
  async crash(page) {
    const pids = page.contentPids();
    if (pids.length === 0) throw new Error("firefox crash: could not tell which content process runs the page");
    this.crashed = true;
    for (const pid of pids) killPid(pid);
    await waitGone(pids);
    await page.close();
    return `web content processes ended (SIGKILL pid ${pids.join(", ")})`;
  }

  async setQuota() {
    throw new Error("firefox: no per-origin quota override from the driver");
  }

  /** Ends the browser process by its pid (SIGKILL), as a crash or a power cut would. */
  async kill() {
    return killBrowser(this);
  }

  async close() {
    this.openPages.clear();
    await this.browser?.close().catch(() => {});
    if (this.pid && existsPid(this.pid)) killPid(this.pid);
    if (this.ownProfile) rmSync(this.ownProfile, { recursive: true, force: true });
  }
}

class FirefoxPage extends DriverPage {
  constructor(browser, raw) {
    super(browser, raw);
    raw.on("pageerror", (err) => {
      const text = err?.message ?? String(err);
      // Firefox logs its own network and CORS notices as JavaScript errors;
      // Chromium logs the same as console errors, and so they count here.
      this.problems.emit(`${FIREFOX_NOTICE.test(text) ? "console.error" : "pageerror"}: ${text}`);
    });
  }
  contentPids() {
    // Firefox does not name a content process's site in its command line,
    // and a page's process is swapped when it navigates: every web content
    // process goes (the suites crash a page while it is the only one open).
    return this.browser.contentProcesses().map((p) => p.pid);
  }
  async waitForFunction(fn, arg, { timeout = 30_000, polling = 20 } = {}) {
    await this.raw.waitForFunction(fn, { timeout, polling }, arg);
  }
  /** The part of Playwright's locator the suites use, over puppeteer. */
  locator(selector) {
    return new FirefoxLocator(this.raw, selector);
  }
}

/**
 * The part of Playwright's locator the suites use, for the drivers that
 * have none (Firefox over puppeteer, WebKit over WebDriver): a selector
 * (and, after first(), an index) resolved when used, waiting up to 30 s for
 * the element as Playwright does; like Playwright, a selector that matches
 * several elements is an error unless first() picked one. Reads run in the
 * page; each driver's subclass gives `inPage(fn, arg)` (`fn(element, arg)`
 * once the element is there), `inPageAll(fn)` (`fn(every match, index)`),
 * `element()`, `press(key)` and `click()` (real input events).
 */
class InPageLocator {
  constructor(selector, index = null) {
    this.selector = selector;
    this.index = index;
  }
  /** As Playwright's fill: the value set at once, with an input event (no key events). */
  async fill(text) {
    await this.inPage((e, text) => {
      e.focus();
      e.value = text;
      e.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
    }, text);
  }
  async count() {
    return this.inPageAll((all) => all.length);
  }
  async textContent() {
    return this.inPage((e) => e.textContent);
  }
  async getAttribute(name) {
    return this.inPage((e, name) => e.getAttribute(name), name);
  }
  async isEnabled() {
    return this.inPage((e) => !e.disabled);
  }
  async isDisabled() {
    return this.inPage((e) => !!e.disabled);
  }
  async allTextContents() {
    return this.inPageAll((all) => all.map((e) => e.textContent));
  }
  /** As Playwright: attached, a non-empty box, not visibility:hidden; no waiting. */
  async isVisible() {
    return this.inPageAll((all, index) => {
      const e = all[index];
      if (!e) return false;
      const box = e.getBoundingClientRect();
      return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== "hidden";
    });
  }
  async isHidden() {
    return !(await this.isVisible());
  }
  /** Waits until the element is visible (Playwright's default state). */
  async waitFor({ timeout = 30_000 } = {}) {
    const deadline = Date.now() + timeout;
    while (!(await this.isVisible())) {
      if (Date.now() > deadline) throw new Error(`locator(${this.selector}).waitFor: not visible within ${timeout} ms`);
      await sleep(50);
    }
  }
}

class FirefoxLocator extends InPageLocator {
  constructor(raw, selector, index = null) {
    super(selector, index);
    this.raw = raw;
  }
  first() {
    return new FirefoxLocator(this.raw, this.selector, 0);
  }
  async element(timeout = 30_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const all = await this.raw.$$(this.selector);
      if (this.index === null && all.length > 1) throw new Error(`locator(${this.selector}): ${all.length} elements match`);
      const el = all[this.index ?? 0];
      if (el) return el;
      if (Date.now() > deadline) throw new Error(`locator(${this.selector}): no element within ${timeout} ms`);
      await sleep(50);
    }
  }
  /**
   * Runs `fn(element, arg)` in the page's own realm once the element is
   * there (puppeteer's ElementHandle.evaluate runs in a sandbox realm under
   * BiDi, where layout reads came back wrong).
   */
  async inPage(fn, arg) {
    await this.element();
    return this.raw.evaluate(
      (selector, index, source, arg) => (0, eval)(`(${source})`)(document.querySelectorAll(selector)[index], arg),
      this.selector,
      this.index ?? 0,
      fn.toString(),
      arg,
    );
  }
  /** Runs `fn(every element the selector matches, index)` in the page's own realm; no waiting. */
  async inPageAll(fn) {
    return this.raw.evaluate(
      (selector, index, source) => (0, eval)(`(${source})`)([...document.querySelectorAll(selector)], index),
      this.selector,
      this.index ?? 0,
      fn.toString(),
    );
  }
  /** A real key press (WebDriver BiDi input) on the focused element. */
  async press(key) {
    const el = await this.element();
    await el.focus();
    await this.raw.keyboard.press(key);
  }
  async click() {
    await (await this.element()).click();
  }
}

// ---------------------------------------------------------------------------
// WebKit: selenium-webdriver through WebKitWebDriver + MiniBrowser.
//
// WebDriver runs one command at a time per session, against the current
// window, and an async script blocks the session until it answers. So a
// page's evaluate() starts the function in the page as a job and polls it,
// each step switching to the page's window under a lock: several pages can
// run functions at once (the two-tab tests). Errors and console.error are
// collected by hooks the page gets at load and handed over at every poll
// (errors thrown while the page loads, before the hooks, are not seen).

// Runs in the page (as a string): hooks, and the value codec both ways
// (JSON, plus undefined, NaN, ±Infinity, -0, bigint and Date).
const WEBKIT_PRELUDE = `
  if (!window.__engines) {
    const problems = [];
    addEventListener("error", (e) => problems.push("pageerror: " + (e.error?.message ?? e.message)));
    addEventListener("unhandledrejection", (e) => problems.push("pageerror: " + (e.reason?.message ?? String(e.reason))));
    const consoleError = console.error.bind(console);
    console.error = (...args) => {
      problems.push("console.error: " + args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : (() => { try { return JSON.stringify(a); } catch { return String(a); } })())).join(" "));
      consoleError(...args);
    };
    const encode = (v, seen = new Set()) => {
      if (v === undefined) return { $: "undefined" };
      if (typeof v === "number") return Number.isFinite(v) && !Object.is(v, -0) ? v : { $: "number", v: Object.is(v, -0) ? "-0" : String(v) };
      if (typeof v === "bigint") return { $: "bigint", v: String(v) };
      if (v === null || typeof v !== "object") return typeof v === "function" || typeof v === "symbol" ? { $: "undefined" } : v;
      if (seen.has(v)) return { $: "undefined" };
      seen.add(v);
      try {
        if (v instanceof Date) return { $: "date", v: v.toISOString() };
        if (Array.isArray(v)) return v.map((x) => encode(x, seen));
        if (v instanceof Error) return { $: "error", v: { name: v.name, message: v.message } };
        const out = {};
        for (const [k, x] of Object.entries(v)) out[k] = encode(x, seen);
        return { $: "object", v: out };
      } finally {
        seen.delete(v);
      }
    };
    const decode = (v) => {
      if (Array.isArray(v)) return v.map(decode);
      if (v === null || typeof v !== "object") return v;
      switch (v.$) {
        case "undefined": return undefined;
        case "number": return v.v === "-0" ? -0 : Number(v.v);
        case "bigint": return BigInt(v.v);
        case "date": return new Date(v.v);
        case "error": return Object.assign(new Error(v.v.message), { name: v.v.name });
        default: return Object.fromEntries(Object.entries(v.v).map(([k, x]) => [k, decode(x)]));
      }
    };
    window.__engines = { problems, jobs: new Map(), encode, decode };
  }
`;

function encodeNode(v, seen = new Set()) {
  if (v === undefined) return { $: "undefined" };
  if (typeof v === "number") return Number.isFinite(v) && !Object.is(v, -0) ? v : { $: "number", v: Object.is(v, -0) ? "-0" : String(v) };
  if (typeof v === "bigint") return { $: "bigint", v: String(v) };
  if (v === null || typeof v !== "object") return typeof v === "function" || typeof v === "symbol" ? { $: "undefined" } : v;
  if (seen.has(v)) throw new TypeError("evaluate: the argument is circular");
  seen.add(v);
  try {
    if (v instanceof Date) return { $: "date", v: v.toISOString() };
    if (Array.isArray(v)) return v.map((x) => encodeNode(x, seen));
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = encodeNode(x, seen);
    return { $: "object", v: out };
  } finally {
    seen.delete(v);
  }
}

function decodeNode(v) {
  if (Array.isArray(v)) return v.map(decodeNode);
  if (v === null || typeof v !== "object") return v;
  switch (v.$) {
    case "undefined":
      return undefined;
    case "number":
      return v.v === "-0" ? -0 : Number(v.v);
    case "bigint":
      return BigInt(v.v);
    case "date":
      return new Date(v.v);
    case "error":
      return Object.assign(new Error(v.v.message), { name: v.v.name });
    default:
      return Object.fromEntries(Object.entries(v.v).map(([k, x]) => [k, decodeNode(x)]));
  }
}

// The driver process groups started here: ended when Node exits, even when a
// suite failed before its after() hook closed the browser (detached, they
// would outlive it).
const driverGroups = new Set();
process.on("exit", () => {
  for (const pgid of driverGroups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

class WebKitBrowser {
  static async launch({ profile } = {}) {
    const self = new WebKitBrowser();
    self.engine = "webkit";
    self.can = {
      // No crash here: WebKitWebDriver deletes its session when a page's
      // web process dies ("session deleted because of page crash or
      // hang"), and a new session starts with empty, ephemeral storage, so
      // nothing could read what the crashed page left. Suites close the
      // window instead.
      crash: null,
      // WebKit's nearest equivalent, without WebDriver: openWebKitOnDisk()
      // (MiniBrowser on a data directory, its web process SIGKILLed).
      crashOnDisk: "web process",
      quota: false,
      // MiniBrowser under automation keeps website data for the session.
      persistentProfile: false,
    };
    self.profile = profile;
    self.openPages = new Set();
    self.notes = [];
    self.lock = Promise.resolve();
    self.nextJob = 1;
    await self.start();
    return self;
  }

  async start() {
    const { Builder } = await import("selenium-webdriver");
    const port = await freePort();
    const args = [`--port=${port}`, "--host=127.0.0.1"];
    // MiniBrowser has no headless mode: without a display, a virtual one.
    const [cmd, argv] = process.env.DISPLAY ? [WEBKIT_DRIVER, args] : ["xvfb-run", ["-a", WEBKIT_DRIVER, ...args]];
    this.driverProcess = spawn(cmd, argv, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    this.driverProcess.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
    this.driverProcess.unref();
    driverGroups.add(this.driverProcess.pid);
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`${url}/status`);
        if ((await res.json())?.value?.ready) break;
      } catch {
        // not listening yet
      }
      if (this.driverProcess.exitCode !== null || Date.now() > deadline)
        throw new Error(`WebKitWebDriver did not start (${cmd} ${argv.join(" ")}): ${stderr}`);
      await sleep(50);
    }
    this.driver = await new Builder().usingServer(url).withCapabilities({ browserName: "MiniBrowser" }).build();
    await this.driver.manage().setTimeouts({ script: 600_000, pageLoad: 120_000 });
    this.home = await this.driver.getWindowHandle();
    this.current = this.home;
    this.pid = descendants(this.driverProcess.pid).find((p) => /MiniBrowser$/.test(p.cmdline[0] ?? ""))?.pid;
  }

  /** Runs `step(driver)` with the session to itself, in `handle`'s window. */
  async inWindow(handle, step) {
    const run = this.lock.then(async () => {
      if (this.current !== handle) {
        await this.driver.switchTo().window(handle);
        this.current = handle;
      }
      return step(this.driver);
    });
    this.lock = run.catch(() => {});
    return run;
  }

  async newPage() {
    const handle = await this.inWindow(this.home, async (driver) => {
      // A window, not a tab: a background tab's timers are throttled.
      await driver.switchTo().newWindow("window");
      return driver.getWindowHandle();
    });
    this.current = handle;
    const page = new WebKitPage(this, handle);
    this.openPages.add(page);
    return page;
  }

  pages() {
    return [...this.openPages];
  }

  /**
   * A page with storage of its own: WebKitWebDriver's windows share one
   * session's storage, so the page gets a browser (session) of its own,
   * closed with it. `viewport` { width, height }: the window's size.
   */
  async newIsolatedPage({ viewport } = {}) {
    const own = await WebKitBrowser.launch();
    const page = await own.newPage();
    if (viewport) await own.inWindow(page.handle, (driver) => driver.manage().window().setRect({ width: viewport.width, height: viewport.height }));
    page.ownBrowser = own;
    page.parentBrowser = this;
    this.openPages.add(page);
    return page;
  }

  async crash() {
    throw new Error("webkit: a crashed page ends the WebDriver session and its ephemeral storage (see can.crash)");
  }

  async setQuota() {
    throw new Error("webkit: no per-origin quota override from the driver");
  }

  /**
   * Ends MiniBrowser by its pid (SIGKILL). The WebDriver session (and its
   * ephemeral storage) goes with it: only close() is left to call.
   */
  async kill() {
    return killBrowser(this);
  }

  async close() {
    this.openPages.clear();
    await this.driver?.quit().catch(() => {});
    if (this.driverProcess?.pid) {
      // xvfb-run, the driver and what they started: their process group.
      try {
        process.kill(-this.driverProcess.pid, "SIGTERM");
      } catch {
        // already gone
      }
      driverGroups.delete(this.driverProcess.pid);
    }
  }
}

class WebKitPage {
  constructor(browser, handle) {
    this.browser = browser;
    this.handle = handle;
    this.problems = new Problems();
    this.currentUrl = "about:blank";
  }
  onProblem(cb) {
    this.problems.on(cb);
  }
  url() {
    return this.currentUrl;
  }
  async goto(url) {
    await this.browser.inWindow(this.handle, async (driver) => {
      await driver.get(url);
      await driver.executeScript(WEBKIT_PRELUDE);
    });
    this.currentUrl = url;
  }
  report(problems) {
    for (const p of problems ?? []) this.problems.emit(p);
  }
  /** Hands over the page's collected errors now. */
  async flush() {
    const problems = await this.browser
      .inWindow(this.handle, (driver) =>
        driver.executeScript(`${WEBKIT_PRELUDE}; return window.__engines.problems.splice(0);`),
      )
      .catch(() => []);
    this.report(problems);
  }
  async evaluate(fn, arg) {
    return this.run(typeof fn === "function" ? fn.toString() : `() => (${fn})`, arg);
  }
  /** Runs the function whose source is `source` with `arg`, in the page. */
  async run(source, arg) {
    const id = this.browser.nextJob++;
    const start = `${WEBKIT_PRELUDE}
      const [source, arg, id] = arguments;
      const { jobs, encode, decode, problems } = window.__engines;
      const job = { done: false };
      jobs.set(id, job);
      Promise.resolve()
        .then(() => (0, eval)("(" + source + ")")(decode(JSON.parse(arg))))
        .then(
          (value) => Object.assign(job, { done: true, value: JSON.stringify(encode(value)) }),
          (e) => Object.assign(job, { done: true, error: { name: e?.name, message: e?.message ?? String(e), stack: e?.stack } }),
        );
      return problems.splice(0);`;
    const poll = `${WEBKIT_PRELUDE}
      const { jobs, problems } = window.__engines;
      const job = jobs.get(arguments[0]);
      const out = { problems: problems.splice(0) };
      if (!job) return Object.assign(out, { gone: true });
      if (job.done) { jobs.delete(arguments[0]); Object.assign(out, job); }
      return out;`;
    this.report(await this.browser.inWindow(this.handle, (d) => d.executeScript(start, source, JSON.stringify(encodeNode(arg)), id)));
    for (let wait = 1; ; wait = Math.min(wait * 2, 25)) {
      await sleep(wait);
      const state = await this.browser.inWindow(this.handle, (d) => d.executeScript(poll, id));
      this.report(state.problems);
      if (state.gone) throw new Error("evaluate: the page navigated, reloaded or closed before the function returned");
      if (!state.done) continue;
      if (state.error) {
        const err = new Error(`evaluate: ${state.error.name ?? "Error"}: ${state.error.message}`);
        err.pageStack = state.error.stack;
        throw err;
      }
      return decodeNode(JSON.parse(state.value));
    }
  }
  async waitForFunction(fn, arg, { timeout = 30_000 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      // truthy in the page (a function is, though it cannot be returned)
      const source = `async (arg) => !!(await (${typeof fn === "function" ? fn.toString() : `() => (${fn})`})(arg))`;
      if (await this.run(source, arg).catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`waitForFunction: not true within ${timeout} ms: ${fn}`);
      await sleep(20);
    }
  }
  async close() {
    if (!this.browser.openPages.has(this)) return;
    await this.flush();
    this.browser.openPages.delete(this);
    await this.browser
      .inWindow(this.handle, async (driver) => {
        await driver.close();
        await driver.switchTo().window(this.browser.home);
        this.browser.current = this.browser.home;
      })
      .catch(() => {});
    // A page of newIsolatedPage(): its own browser (session, storage) goes too.
    if (this.ownBrowser) {
      this.parentBrowser.openPages.delete(this);
      await this.ownBrowser.close();
    }
  }
  async reload() {
    await this.browser.inWindow(this.handle, async (driver) => {
      await driver.navigate().refresh();
      await driver.executeScript(WEBKIT_PRELUDE);
    });
  }
  /** `path`: where the PNG goes (WebDriver's screenshot of the window). */
  async screenshot({ path } = {}) {
    const png = await this.browser.inWindow(this.handle, (driver) => driver.takeScreenshot());
    if (path) writeFileSync(path, Buffer.from(png, "base64"));
  }
  /** The part of Playwright's locator the suites use, over WebDriver. */
  locator(selector) {
    return new WebKitLocator(this, selector);
  }
}

/**
 * The locator over WebDriver: reads in the page by selector; click and key
 * presses are WebDriver's own (real input events).
 */
class WebKitLocator extends InPageLocator {
  constructor(page, selector, index = null) {
    super(selector, index);
    this.page = page;
  }
  first() {
    return new WebKitLocator(this.page, this.selector, 0);
  }
  /** Runs `fn(element, arg)` in the page once the element is there (30 s), as FirefoxLocator.inPage. */
  async inPage(fn, arg) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await this.page.evaluate(
        ([selector, index, source, arg]) => {
          const all = document.querySelectorAll(selector);
          if (index === null && all.length > 1) return { many: all.length };
          const e = all[index ?? 0];
          if (!e) return { missing: true };
          return { value: (0, eval)(`(${source})`)(e, arg) };
        },
        [this.selector, this.index, fn.toString(), arg],
      );
      if (r.many) throw new Error(`locator(${this.selector}): ${r.many} elements match`);
      if (!r.missing) return r.value;
      if (Date.now() > deadline) throw new Error(`locator(${this.selector}): no element within 30000 ms`);
      await sleep(50);
    }
  }
  /** Runs `fn(every element the selector matches, index)` in the page; no waiting. */
  async inPageAll(fn) {
    return this.page.evaluate(
      ([selector, index, source]) => (0, eval)(`(${source})`)([...document.querySelectorAll(selector)], index),
      [this.selector, this.index ?? 0, fn.toString()],
    );
  }
  async element() {
    await this.inPage(() => true);
    const { By } = await import("selenium-webdriver");
    return this.page.browser.inWindow(this.page.handle, async (driver) => (await driver.findElements(By.css(this.selector)))[this.index ?? 0]);
  }
  /** A real key press (WebDriver) on the element. */
  async press(key) {
    const { Key } = await import("selenium-webdriver");
    const el = await this.element();
    const k = { Enter: Key.ENTER, Escape: Key.ESCAPE, Tab: Key.TAB, Backspace: Key.BACK_SPACE }[key] ?? key;
    await this.page.browser.inWindow(this.page.handle, () => el.sendKeys(k));
  }
  async click() {
    const el = await this.element();
    await this.page.browser.inWindow(this.page.handle, () => el.click());
  }
}

// ---------------------------------------------------------------------------
// WebKit with IndexedDB on disk, without WebDriver.
//
// MiniBrowser under WebKitWebDriver keeps website data in an ephemeral
// session, and the driver ends the session when a page's web process dies:
// nothing could read what a crashed page left. Started without
// `--automation`, on data and cache directories of its own (XDG_DATA_HOME,
// XDG_CACHE_HOME), MiniBrowser keeps IndexedDB on disk, in its network
// process; when its WebKitWebProcess is killed, the browser and the network
// process live on, as a browser does after a renderer crash, and a new
// MiniBrowser on the same directory reads what was stored. There is no
// driver: the page runs by itself (from its URL) and reports over HTTP.

/** WebKitGTK's MiniBrowser (Debian's webkit2gtk-driver brings it), under /usr/lib/<triplet>/. */
export function miniBrowserPath() {
  for (const triplet of readdirSync("/usr/lib")) {
    for (const api of ["webkit2gtk-4.1", "webkitgtk-6.0", "webkit2gtk-4.0"]) {
      const path = join("/usr/lib", triplet, api, "MiniBrowser");
      if (existsSync(path)) return path;
    }
  }
  throw new Error("no MiniBrowser under /usr/lib/*/webkit*/ (apt-get install webkit2gtk-driver)");
}

/**
 * Opens `url` in a MiniBrowser of its own keeping its data in `dataDir`
 * (under `xvfb-run -a` when there is no display). Returns { pid,
 * crash() (SIGKILLs its web processes: the page dies, the browser and its
 * storage live on), close() (ends the browser, its network process and the
 * virtual display), exited() (why it is gone, or null) }.
 */
export async function openWebKitOnDisk(url, { dataDir }) {
  const binary = miniBrowserPath();
  const env = { ...process.env, XDG_DATA_HOME: join(dataDir, "data"), XDG_CACHE_HOME: join(dataDir, "cache"), XDG_CONFIG_HOME: join(dataDir, "config") };
  const [cmd, argv] = process.env.DISPLAY ? [binary, [url]] : ["xvfb-run", ["-a", binary, url]];
  const child = spawn(cmd, argv, { env, stdio: ["ignore", "ignore", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  child.unref();
  driverGroups.add(child.pid);
  const webProcesses = () => descendants(child.pid).filter((p) => /WebKitWebProcess$/.test(p.cmdline[0] ?? ""));
  return {
    pid: child.pid,
    exited: () => (child.exitCode !== null ? `MiniBrowser exited (${child.exitCode}): ${stderr}` : null),
    async crash() {
      const deadline = Date.now() + 10_000;
      let pids = webProcesses().map((p) => p.pid);
      while (pids.length === 0 && Date.now() < deadline) {
        await sleep(20);
        pids = webProcesses().map((p) => p.pid);
      }
      if (pids.length === 0) throw new Error("webkit on disk: no WebKitWebProcess to end");
      for (const pid of pids) killPid(pid);
      await waitGone(pids);
      return `web process ended (SIGKILL pid ${pids.join(", ")}); MiniBrowser and its network process live on`;
    },
    async close() {
      const pids = descendants(child.pid).map((p) => p.pid);
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await waitGone(pids, 10_000);
      for (const pid of pids) if (existsPid(pid)) killPid(pid);
      driverGroups.delete(child.pid);
    },
  };
}
