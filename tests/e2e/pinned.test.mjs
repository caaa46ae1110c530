// Pinned messages through the store, in each engine (Chromium, Firefox,
// WebKit through tests/support/browsers.mjs; real IndexedDB): a session with
// a pinned rule is compacted, saved, and loaded again by a store opened in
// another page; the loaded rule is still pinned and the model's view (the
// stateless transformContext and a new Compactor's hooks) has it right after
// the summary; a second compaction keeps it there, and the session's pi
// export and import keep the flag. And `loadContext`: a store that never
// read the session returns the pinned messages before the summary (found
// by the keys the session record keeps of them, inside packs too), then the
// context, also for a fork, an import, and a record written before the keys
// were kept; the record's `contextTokens` counts them as the Compactor does
// and takes off what a clearing marker freed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>pinned</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;
const RULE = "Pinned rule: never modify files under vendor/.";

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/pinned.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    const open = async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}pinned.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      return page;
    };

    test("a pinned message: compacted, saved, reloaded in another page, still pinned and sent after the summary", async () => {
      const name = "pinned-" + Math.random().toString(36).slice(2);
      const first = await open();
      const saved = await first.evaluate(
        async ({ name, rule }) => {
          const m = window.m;
          let t = 1_750_000_000_000;
          const turn = (i) => [
            { role: "user", content: `request ${i}: ` + "u".repeat(4000), timestamp: t++ },
            { role: "assistant", content: [{ type: "text", text: `answer ${i}: ` + "a".repeat(4000) }],
              api: "openai-completions", provider: "local", model: "m",
              usage: { input: 2000 * (i + 1), output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 2000 * (i + 1) + 10,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
              stopReason: "stop", timestamp: t++ },
          ];
          let messages = [{ role: "user", content: rule, timestamp: t++, pinned: true }];
          for (let i = 0; i < 8; i++) messages.push(...turn(i));
          const store = await m.SessionStore.open({ name });
          const meta = await store.createSession({ title: "pinned" });
          await store.save(meta.id, messages);
          const compactor = new m.Compactor({ contextWindow: 100_000, settings: { keepRecentTokens: 3_000 } });
          const out = await compactor.compact(messages);
          await store.save(meta.id, out.messages);
          store.close();
          return { id: meta.id, firstKept: out.firstKeptIndex };
        },
        { name, rule: RULE },
      );
      await first.close();

      const second = await open();
      const seen = await second.evaluate(
        async ({ name, id, rule }) => {
          const m = window.m;
          const store = await m.SessionStore.open({ name });
          let messages = await store.load(id);
          const view = (ctx) => ctx.map((x) => [x.role, x.pinned === true, typeof x.content === "string" ? x.content.slice(0, 60) : ""]);
          const compactor = new m.Compactor({ contextWindow: 100_000, settings: { keepRecentTokens: 3_000 } });
          const hooks = compactor.agentHooks();
          const stateless = m.transformContext(messages);
          const hooked = await hooks.transformContext(messages);
          const tokensBefore = compactor.contextTokens(messages);
          // More turns, and a second compaction.
          let t = Math.max(...messages.map((x) => x.timestamp)) + 1;
          for (let i = 0; i < 6; i++) {
            messages = [...messages, { role: "user", content: `later ${i}: ` + "v".repeat(4000), timestamp: t++ }];
          }
          messages = (await compactor.compact(messages)).messages;
          await store.save(id, messages);
          const again = await store.load(id);
          const afterSecond = m.transformContext(again);
          const reimported = await store.load((await store.importJsonl(await store.exportJsonl(id))).id);
          store.close();
          return {
            pinnedStored: messages[0].pinned === true && messages[0].content === rule,
            stateless: view(stateless),
            sameObjects: stateless.every((x, i) => x === hooked[i]) && stateless.length === hooked.length,
            tokensBefore,
            afterSecond: view(afterSecond),
            summaries: again.filter((x) => x.role === "compactionSummary").length,
            reimportedPinned: reimported.filter((x) => x.pinned === true).map((x) => x.content),
          };
        },
        { name, id: saved.id, rule: RULE },
      );
      await second.close();

      assert.equal(seen.pinnedStored, true, "the flag is stored with the message");
      assert.deepEqual(seen.stateless[0].slice(0, 2), ["compactionSummary", false]);
      assert.deepEqual(seen.stateless[1], ["user", true, RULE]);
      assert.equal(seen.sameObjects, true, "the Compactor's hooks give the same view");
      assert.ok(seen.tokensBefore > Math.ceil(RULE.length / 4));
      assert.equal(seen.summaries, 2);
      assert.deepEqual(seen.afterSecond[0].slice(0, 2), ["compactionSummary", false]);
      assert.deepEqual(seen.afterSecond[1], ["user", true, RULE], "still right after the second summary");
      assert.equal(seen.afterSecond.filter((x) => x[1]).length, 1);
      assert.deepEqual(seen.reimportedPinned, [RULE], "pi export and import keep the flag");
    });
    test("loadContext returns the pinned messages before the summary; contextTokens counts them and what a marker freed", async () => {
      const name = "pinned-context-" + Math.random().toString(36).slice(2);
      const first = await open();
      const seen = await first.evaluate(
        async ({ name, rule }) => {
          const m = window.m;
          let t = 1_750_000_000_000;
          const usage = (input) => ({ input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
          const assistant = (text, input) => ({ role: "assistant", content: [{ type: "text", text }],
            api: "openai-completions", provider: "local", model: "m", usage: usage(input), stopReason: "stop", timestamp: t++ });
          // 300 messages, pinned at 0 and 201 (long enough for packed records).
          let messages = [{ role: "user", content: rule, timestamp: t++, pinned: true }];
          for (let i = 0; messages.length < 300; i++) {
            if (messages.length === 201) {
              messages.push({ role: "custom", customType: "note", content: "Second rule: answer in British English.", display: true, timestamp: t++, pinned: true });
              continue;
            }
            messages.push({ role: "user", content: `request ${i}: ` + "u".repeat(300), timestamp: t++ });
            messages.push(assistant(`answer ${i}: ` + "a".repeat(300), 200 * (i + 1)));
          }
          const store = await m.SessionStore.open({ name });
          const { id } = await store.createSession({ title: "pinned context" });
          await store.save(id, messages);
          const compactor = new m.Compactor({ contextWindow: 200_000, estimator: "pi", settings: { keepRecentTokens: 2_000 } });
          messages = (await compactor.compact(messages)).messages;
          const metas = [await store.save(id, messages)];
          const tokens = [compactor.contextTokens(messages)];
          // A clearing marker after the summary (stamped after it), then a
          // user turn: what it freed comes off; then an answer with usage:
          // that usage stands.
          t = Date.now() + 1_000;
          messages = [...messages,
            { role: "toolOutputCleared", toolCallIds: ["c1"], outputTokens: [900], tokensFreed: 880, timestamp: t++ },
            { role: "user", content: "next request", timestamp: t++ }];
          metas.push(await store.save(id, messages));
          tokens.push(compactor.contextTokens(messages));
          messages = [...messages, assistant("done", 5_000)];
          metas.push(await store.save(id, messages));
          tokens.push(compactor.contextTokens(messages));
          store.close();

          // A store that never read the session (another page's would do the same).
          const fresh = await m.SessionStore.open({ name });
          const whole = await fresh.load(id);
          const context = await fresh.loadContext(id);
          const fork = await fresh.fork(id, whole.length);
          const forkContext = await fresh.loadContext(fork.id);
          const imported = await fresh.importJsonl(await fresh.exportJsonl(id));
          const importedContext = await fresh.loadContext(imported.id);
          // What loadContext returned, and a turn, saved with `replace` into
          // a fork: the pinned messages stay, in front of the summary.
          const replaced = (await fresh.fork(id, whole.length)).id;
          const replacedContext = await fresh.loadContext(replaced);
          const turnAfter = { role: "user", content: "after the replace", timestamp: t++ };
          const refused = await fresh.save(replaced, [...replacedContext, turnAfter]).then(() => "saved", (e) => e.name);
          await fresh.save(replaced, [...replacedContext, turnAfter], { replace: true });
          const reopened = await m.SessionStore.open({ name });
          const replacedWhole = await reopened.load(replaced);
          const replacedAgain = await reopened.loadContext(replaced);
          reopened.close();
          fresh.close();

          // A record written before `pinnedKeys` existed: the field removed
          // by hand; loadContext reads the whole session to find them.
          await new Promise((resolve, reject) => {
            const open = indexedDB.open(name);
            open.onsuccess = () => {
              const tx = open.result.transaction("sessions", "readwrite");
              const sessions = tx.objectStore("sessions");
              const get = sessions.get(id);
              get.onsuccess = () => {
                const record = get.result;
                delete record.pinnedKeys;
                sessions.put(record);
              };
              tx.oncomplete = () => (open.result.close(), resolve());
              tx.onerror = () => reject(tx.error);
            };
            open.onerror = () => reject(open.error);
          });
          const legacy = await m.SessionStore.open({ name });
          const legacyContext = await legacy.loadContext(id);
          legacy.close();

          const last = whole.findLastIndex((x) => x.role === "compactionSummary");
          const expected = [...whole.slice(0, last).filter((x) => x.pinned === true), ...whole.slice(last)];
          // Key order aside (an import builds its objects afresh).
          const sorted = (v) => Array.isArray(v) ? v.map(sorted)
            : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
          const json = (a) => JSON.stringify(sorted(a));
          return {
            last,
            pinnedBefore: whole.slice(0, last).filter((x) => x.pinned === true).map((x) => x.content),
            context: json(context) === json(expected),
            contextLength: [context.length, expected.length, whole.length],
            sameView: json(m.transformContext(context)) === json(m.transformContext(whole)),
            fork: json(forkContext) === json(expected),
            imported: json(importedContext) === json(expected),
            legacy: json(legacyContext) === json(expected),
            refused,
            replaced: json(replacedWhole) === json([...expected, turnAfter]) && json(replacedAgain) === json([...expected, turnAfter]),
            metaTokens: metas.map((x) => x.contextTokens),
            tokens,
            noInternal: metas.every((x) => !("pinnedKeys" in x) && !("contextKey" in x)),
          };
        },
        { name, rule: RULE },
      );
      await first.close();

      assert.ok(seen.last > 201, `the summary comes after both pinned messages (at ${seen.last})`);
      assert.deepEqual(seen.pinnedBefore, [RULE, "Second rule: answer in British English."]);
      assert.equal(seen.context, true, `loadContext: pinned, then the summary on (${seen.contextLength})`);
      assert.equal(seen.sameView, true, "the model's view of loadContext is the view of the whole array");
      assert.equal(seen.fork, true, "a fork's loadContext");
      assert.equal(seen.imported, true, "an imported copy's loadContext");
      assert.equal(seen.legacy, true, "a record without pinnedKeys");
      assert.equal(seen.refused, "RefusedDropError", "saving loadContext's array drops messages: refused");
      assert.equal(seen.replaced, true, "saved with replace: pinned, summary, the rest, the turn; loadContext the same");
      assert.deepEqual(seen.metaTokens, seen.tokens, "the record's contextTokens is the Compactor's (pi's estimate)");
      assert.ok(seen.tokens[1] < seen.tokens[0], "what the marker freed comes off");
      assert.equal(seen.tokens[2], 5_000 + 10, "usage after the marker stands");
      assert.equal(seen.noInternal, true, "the app's meta has no internal fields");
    });
  });
}
