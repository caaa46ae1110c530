// agent-compaction/ai-sdk's declarations against the real `ai` 7 types
// (tsc --strict): the conversation's prepareStep, run and instructions fit
// generateText / streamText; conversions take and give ai's ModelMessage.
import { generateText, streamText, stepCountIs, type ModelMessage, type UIMessage, type LanguageModel } from "ai";
import { Compactor, type AnyMessage } from "agent-compaction";
import {
  aiSdkConversation,
  aiSdkSummarizer,
  fromModelMessages,
  fromUIMessages,
  toModelMessages,
  toUIMessages,
  OVERFLOW_RECOVERY_FAILED,
  type AiSdkFlatMessage,
} from "agent-compaction/ai-sdk";

declare const model: LanguageModel;
const compactor = new Compactor({ contextWindow: 100_000, summarize: aiSdkSummarizer(model, { maxOutputTokens: 2000 }) });
const conv = aiSdkConversation({ compactor });

export async function flows(): Promise<string> {
  await conv.append({ role: "user", content: "hi" });
  const a = await conv.run((call) => generateText({ model, stopWhen: stepCountIs(5), ...call }));
  const b = await conv.run((call) => streamText({ model, ...call }));
  // Without run: prepareStep passed by hand.
  const c = await generateText({ model, messages: conv.modelMessages(), prepareStep: conv.prepareStep });
  await conv.appendSteps(c.steps);
  const flat: AnyMessage[] = conv.messages;
  const back: ModelMessage[] = toModelMessages(flat);
  const again: AiSdkFlatMessage[] = fromModelMessages(back, { timestamp: 1 });
  const ui: UIMessage[] = toUIMessages(flat, { divider: true });
  const stored: AiSdkFlatMessage[] = await fromUIMessages(ui);
  return a.text + (await b.text) + again.length + stored.length + OVERFLOW_RECOVERY_FAILED;
}
