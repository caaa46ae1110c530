// A Node script in TypeScript with the package installed from its tarball
// (and `ai` beside it): compiled by tsc, then run. It prints one JSON line.
import { Compactor, transformContext, type AnyMessage } from "agent-compaction";
import { aiSdkConversation, fromModelMessages, toModelMessages } from "agent-compaction/ai-sdk";
import type { ModelMessage } from "ai";

const history: ModelMessage[] = [];
for (let i = 0; i < 30; i++) {
  history.push({ role: "user", content: `question ${i}: ${"q".repeat(3000)}` });
  history.push({ role: "assistant", content: [{ type: "text", text: `answer ${i}: ${"a".repeat(3000)}` }] });
}
const flat: AnyMessage[] = fromModelMessages(history, { timestamp: 1 });
const back: ModelMessage[] = toModelMessages(flat);

const compactor = new Compactor({ contextWindow: 50_000, settings: { reserveTokens: 5000, keepRecentTokens: 8000 } });
const conversation = aiSdkConversation({ compactor, messages: flat });
const compacted = await conversation.compact();
const override = await conversation.prepareStep({ stepNumber: 0, steps: [] });

console.log(
  JSON.stringify({
    roundTrip: back.length === history.length,
    summarizedBy: compacted.summarizedBy,
    firstSent: override.messages[0]?.role,
    smaller: override.messages.length < history.length,
    context: transformContext(conversation.messages).length,
  }),
);
