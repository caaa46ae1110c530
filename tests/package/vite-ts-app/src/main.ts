// A Vite + TypeScript app as `npm create vite` makes one, with the package
// installed from its tarball: imported by name with no init call, a
// compaction (extractive summary), the model's view, and a session in
// IndexedDB. The test reads #result.
import { Compactor, SessionStore, convertToLlm, transformContext, type AgentMessage, type CompactorEvent } from "agent-compaction";

const conversation: AgentMessage[] = [];
for (let i = 0; i < 20; i++) {
  conversation.push({ role: "user", content: `request ${i}: ${"u".repeat(4000)}`, timestamp: 2 * i + 1 });
  conversation.push({
    role: "assistant",
    content: [{ type: "text", text: "a".repeat(4000) }],
    api: "openai-completions",
    provider: "openai",
    model: "gpt-4o",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: 2 * i + 2,
  });
}

const events: CompactorEvent["type"][] = [];
const out = document.querySelector<HTMLPreElement>("#result");
if (!out) throw new Error("no #result");
try {
  const compactor = new Compactor({
    contextWindow: 100_000,
    settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
    onEvent: (event) => events.push(event.type),
  });
  const result = await compactor.compact(conversation);
  const sent = convertToLlm(transformContext(result.messages));
  const store = await SessionStore.open({ name: `vite-ts-app-${Date.now()}` });
  const session = await store.createSession({ title: "typed" });
  const saved = await store.save(session.id, result.messages);
  store.close();
  out.textContent = JSON.stringify({
    ok: true,
    summarizedBy: result.summarizedBy,
    firstSent: sent[0]?.role,
    events,
    savedCount: saved.messageCount,
  });
} catch (error) {
  out.textContent = JSON.stringify({ ok: false, error: String(error instanceof Error ? error.stack : error) });
}
