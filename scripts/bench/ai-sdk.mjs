// `node scripts/bench/ai-sdk.mjs` (needs a built pkg/): the per-step cost of
// keeping an AI SDK agent's context, replaying a 10,000-message AI SDK
// conversation step by step, three ways, in one Node process:
//   ours     aiSdkConversation's prepareStep (the steps' new messages into
//            the flat array, the compactor's threshold check, compaction
//            when due with the extractive summarizer, toModelMessages of
//            the context) and appendSteps after each call;
//   prune    the AI SDK guide's recipe in prepareStep: when
//            JSON.stringify(messages).length / 4 passes the limit, replace
//            the messages with pruneMessages({ reasoning:
//            "before-last-message", toolCalls: "before-last-2-messages" });
//   nothing  pass the SDK's growing list as it is.
// The conversation: 2,500 calls (a user message, a step with a tool call
// and its result, a step with the answer), 10,000 ModelMessages. Window
// 200,000 tokens, reserve 16,384, keep 20,000 (the defaults). A program
// that prints numbers: per-step median, p90, max, total, last tenth /
// first tenth of the medians, and the context each way sends at the end.
import { pruneMessages } from "ai";
import { Compactor } from "agent-compaction";
import { aiSdkConversation } from "agent-compaction/ai-sdk";

const CALLS = Number(process.env.CALLS ?? 2500);
const WINDOW = 200_000;
const LIMIT = WINDOW - 16_384;
const log = (...a) => console.log(...a);

// A deterministic pseudo-random text source.
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const words = "the parser module reads tokens from the lexer and builds a tree of nodes for each function body".split(" ");
const text = (chars) => {
  let s = "";
  while (s.length < chars) s += words[Math.floor(rnd() * words.length)] + " ";
  return s.slice(0, chars);
};

/** One call: its user message and its two steps' response messages. */
function makeCall(i) {
  const id = `call_${i}`;
  return {
    user: { role: "user", content: `task ${i}: ` + text(200 + Math.floor(rnd() * 1800)) },
    steps: [
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: text(200) },
            { type: "text", text: "Let me look." },
            { type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: `src/file${i}.rs` } },
          ],
        },
        {
          role: "tool",
          content: [
            i % 3 === 0
              ? { type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "json", value: { path: `src/file${i}.rs`, lines: text(2000 + Math.floor(rnd() * 6000)).split(" ") } } }
              : { type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: text(2000 + Math.floor(rnd() * 6000)) } },
          ],
        },
      ],
      [{ role: "assistant", content: [{ type: "text", text: text(300 + Math.floor(rnd() * 700)) }] }],
    ],
  };
}
const conversation = Array.from({ length: CALLS }, (_, i) => makeCall(i));
const messageCount = conversation.reduce((n, c) => n + 1 + c.steps.flat().length, 0);

const now = () => process.hrtime.bigint();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};
const tokensOf = (messages) => Math.ceil(JSON.stringify(messages).length / 4);

/**
 * Replays the conversation through `way`: `startCall(userMessage)`,
 * `step(stepNumber, steps)` (timed: what runs before each model call) and
 * `endCall(steps)` (timed: after the last step). Returns the per-step costs in µs.
 */
async function replay(way) {
  const costs = [];
  for (const call of conversation) {
    await way.startCall(call.user);
    const steps = [];
    for (let k = 0; k <= call.steps.length; k++) {
      const t0 = now();
      if (k < call.steps.length) await way.step(k, steps);
      else await way.endCall(steps);
      costs.push(Number(now() - t0) / 1000);
      if (k < call.steps.length) {
        // The model answered: the SDK adds the step (untimed, identical for
        // all ways). No usage: the compactor estimates every message (the
        // costlier path; a provider's usage would let it skip estimates).
        steps.push({ response: { messages: call.steps[k] }, model: { provider: "bench", modelId: "m" } });
      }
    }
  }
  return costs;
}

function ours() {
  const compactor = new Compactor({ contextWindow: WINDOW });
  const conv = aiSdkConversation({ compactor });
  let sent = [];
  return {
    name: "ours (prepareStep)",
    startCall: (user) => conv.append(user),
    async step(stepNumber, steps) {
      sent = (await conv.prepareStep({ stepNumber, steps })).messages;
    },
    endCall: (steps) => conv.appendSteps(steps),
    report: () => ({ sent, compactions: conv.messages.filter((m) => m.role === "compactionSummary").length, flat: conv.messages.length }),
  };
}

function prune() {
  let messages = [];
  let taken = 0;
  let prunes = 0;
  return {
    name: "pruneMessages recipe",
    startCall(user) {
      messages = [...messages, user];
      taken = 0;
    },
    step(stepNumber, steps) {
      // The SDK's messages for this step: what it had plus the new steps' messages.
      for (const s of steps.slice(taken)) messages = [...messages, ...s.response.messages];
      taken = steps.length;
      if (JSON.stringify(messages).length / 4 > LIMIT) {
        messages = pruneMessages({ messages, reasoning: "before-last-message", toolCalls: "before-last-2-messages", emptyMessages: "remove" });
        prunes++;
      }
    },
    endCall(steps) {
      for (const s of steps.slice(taken)) messages = [...messages, ...s.response.messages];
    },
    report: () => ({ sent: messages, prunes }),
  };
}

function nothing() {
  let messages = [];
  let taken = 0;
  return {
    name: "nothing",
    startCall(user) {
      messages = [...messages, user];
      taken = 0;
    },
    step(stepNumber, steps) {
      for (const s of steps.slice(taken)) messages = [...messages, ...s.response.messages];
      taken = steps.length;
    },
    endCall(steps) {
      for (const s of steps.slice(taken)) messages = [...messages, ...s.response.messages];
    },
    report: () => ({ sent: messages }),
  };
}

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} µs`);
log(`AI SDK conversation: ${CALLS} calls, ${messageCount} ModelMessages, ${Math.round(conversation.reduce((n, c) => n + tokensOf([c.user, ...c.steps.flat()]), 0) / 1000)}k tokens (JSON chars / 4); window ${WINDOW}, node ${process.version}`);
log("");
log("| way | steps | median per step | p90 | max | total | last ⅒ / first ⅒ (medians) | context sent at the end | notes |");
log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
for (const make of [ours, prune, nothing]) {
  const way = make();
  const costs = await replay(way);
  const tenth = Math.floor(costs.length / 10);
  const ratio = median(costs.slice(-tenth)) / median(costs.slice(0, tenth));
  const r = way.report();
  const notes = r.compactions !== undefined ? `${r.compactions} compactions (extractive), flat array ${r.flat} messages` : r.prunes !== undefined ? `${r.prunes} prunes` : "the context grows without bound";
  log(
    `| ${way.name} | ${costs.length} | ${fmt(median(costs))} | ${fmt(pct(costs, 0.9))} | ${fmt(Math.max(...costs))} | ${fmt(costs.reduce((a, b) => a + b, 0))} | ${ratio.toFixed(2)} | ${Math.round(tokensOf(r.sent) / 1000)}k tokens (${r.sent.length} messages) | ${notes} |`,
  );
}
