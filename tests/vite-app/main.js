// A plain app importing the package by name, no init call (SPEC §0); then
// the parts that run later in an app's life, from the same module: the
// extractive summarizer (a compaction without a summarizer), a threshold
// compaction that clears old tool output, and the store (SessionStore.open).
// A bundler must emit and serve the one .wasm.
import { Compactor, SessionStore, convertToLlm, transformContext } from "agent-compaction";

const messages = [
  { role: "user", content: "first question", timestamp: 1 },
  { role: "assistant", content: [{ type: "text", text: "first answer" }], timestamp: 2 },
  {
    role: "compactionSummary",
    summary: "The user asked a first question.",
    tokensBefore: 1234,
    details: { readFiles: ["a.ts"], modifiedFiles: [] },
    timestamp: 3,
  },
  { role: "user", content: "second question", timestamp: 4 },
];

const conversation = [];
for (let i = 0; i < 20; i++) {
  conversation.push({ role: "user", content: `request ${i}: ` + "u".repeat(4000), timestamp: 2 * i + 1 });
  conversation.push({ role: "assistant", content: [{ type: "text", text: "a".repeat(4000) }], timestamp: 2 * i + 2 });
}

// Ten turns, each with a 80,000-character tool output: clearing old ones is enough.
const toolTurns = [];
for (let t = 0; t < 10; t++) {
  const id = `call_${t}`;
  toolTurns.push({ role: "user", content: `request ${t}`, timestamp: 4 * t + 1 });
  toolTurns.push({ role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `/${t}.ts` } }], stopReason: "toolUse", timestamp: 4 * t + 2 });
  toolTurns.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: "x".repeat(80_000) }], isError: false, timestamp: 4 * t + 3 });
  toolTurns.push({ role: "assistant", content: [{ type: "text", text: `done ${t}` }], stopReason: "stop", timestamp: 4 * t + 4 });
}

const out = document.getElementById("result");
try {
  const llm = convertToLlm(transformContext(messages));
  const compacted = await new Compactor({
    contextWindow: 100_000,
    settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
  }).compact(conversation);
  const cleared = await new Compactor({ contextWindow: 200_000, estimator: "pi" }).compact(toolTurns, { reason: "threshold" });
  const store = await SessionStore.open({ name: `vite-app-${Date.now()}` });
  const session = await store.createSession({ title: "from a bundle" });
  store.close();
  out.textContent = JSON.stringify({
    ok: true,
    count: llm.length,
    first: llm[0].content[0].text,
    sameObject: llm[1] === messages[3],
    summarizedBy: compacted.summarizedBy,
    tier: cleared.tier,
    storeTitle: session.title,
  });
} catch (err) {
  out.textContent = JSON.stringify({ ok: false, error: String(err?.stack ?? err) });
}
