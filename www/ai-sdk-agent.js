// The demo's agent on the AI SDK (the "Run the agent on the AI SDK"
// setting): streamText with @ai-sdk/openai-compatible, the demo's tools,
// and agent-compaction/ai-sdk's conversation doing compaction between steps
// and the one retry on overflow. It offers the part of pi-agent-core's
// Agent the demo's page uses (state, prompt, followUp, subscribe, abort,
// waitForIdle), so the page, its indicator, divider, stats and undo are the
// same for both runtimes. Loaded (with `ai`) only when the setting is on.
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { aiSdkConversation, aiSdkSummarizer } from "agent-compaction/ai-sdk";
import { DEMO_TOOLS, runDemoTool } from "./local-tools.js";

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

/** The AI SDK model for the demo's endpoint. */
export function aiSdkModel(endpoint) {
  const provider = createOpenAICompatible({
    name: endpoint.local ? "local" : "openai-compatible",
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    includeUsage: true,
  });
  return provider(endpoint.modelId);
}

/** A summarizer through the same model. */
export { aiSdkSummarizer };

const zeroUsage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

export class AiSdkAgent {
  #conv;
  #model;
  #tools;
  #instructions;
  #maxOutputTokens;
  #listeners = new Set();
  #queue = [];
  #running = null;
  #abort = null;

  constructor({ compactor, model, store, sessionId, messages, systemPrompt, toolDelayMs = 0, maxOutputTokens, backgroundAt, onSaveError }) {
    this.#model = model;
    this.#instructions = systemPrompt;
    this.#maxOutputTokens = maxOutputTokens;
    this.#tools = Object.fromEntries(
      DEMO_TOOLS.map((t) => [
        t.name,
        tool({
          description: t.description,
          inputSchema: jsonSchema(t.parameters),
          execute: async (args, { abortSignal }) => {
            if (toolDelayMs > 0) await sleep(toolDelayMs, abortSignal);
            return runDemoTool(t.name, args);
          },
        }),
      ]),
    );
    // The tools and system prompt of every call: compactions pass them on, so
    // that summary requests repeat the conversation's cached prefix.
    this.#conv = aiSdkConversation({ compactor, store, sessionId, messages, onSaveError, tools: this.#tools, instructions: systemPrompt, backgroundAt });
    // The model can look up what a summary left out (search_history, read_history).
    Object.assign(this.#tools, this.#conv.historyTools());
    const conv = this.#conv;
    const agent = this;
    this.state = {
      isStreaming: false,
      streamingMessage: null,
      pendingToolCalls: new Set(),
      get messages() {
        return conv.messages;
      },
      set messages(next) {
        // /compact and undo set the array; the conversation keeps it and saves it.
        conv.setMessages(next).catch((error) => agent.#emit({ type: "save_error", error }));
      },
    };
  }

  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event) {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch (err) {
        console.error(err);
      }
    }
  }

  prompt(message) {
    if (this.state.isStreaming) throw new Error("Agent is already processing a prompt. Use followUp() to queue messages.");
    this.#queue.unshift(message);
    this.#running = this.#loop();
    return this.#running;
  }

  followUp(message) {
    this.#queue.push(message);
  }

  clearAllQueues() {
    this.#queue.length = 0;
  }

  abort() {
    this.#abort?.abort();
  }

  waitForIdle() {
    return this.#running ?? Promise.resolve();
  }

  async #loop() {
    this.state.isStreaming = true;
    this.#emit({ type: "agent_start" });
    try {
      while (this.#queue.length > 0) {
        const message = this.#queue.shift();
        this.#emit({ type: "message_start", message });
        // The page's message is a pi user message; its text parts are a ModelMessage's too.
        await this.#conv.append({ role: "user", content: message.content });
        this.#emit({ type: "message_end", message });
        await this.#call();
      }
    } finally {
      this.state.isStreaming = false;
      this.state.streamingMessage = null;
      this.state.pendingToolCalls.clear();
      this.#abort = null;
      this.#emit({ type: "agent_end" });
    }
  }

  async #call() {
    const abort = (this.#abort = new AbortController());
    let text = "";
    const streaming = () => ({ role: "assistant", content: [{ type: "text", text }], api: "ai-sdk", provider: "ai-sdk", model: "", usage: zeroUsage(), stopReason: "stop", timestamp: Date.now() });
    try {
      await this.#conv.run((call) =>
        streamText({
          model: this.#model,
          tools: this.#tools,
          instructions: this.#instructions,
          stopWhen: stepCountIs(24),
          maxOutputTokens: this.#maxOutputTokens,
          abortSignal: abort.signal,
          maxRetries: 0,
          onChunk: ({ chunk }) => {
            if (chunk.type === "text-delta") {
              text += chunk.text;
              this.state.streamingMessage = streaming();
            } else if (chunk.type === "tool-call") this.state.pendingToolCalls.add(chunk.toolCallId);
            else if (chunk.type === "tool-result" || chunk.type === "tool-error") this.state.pendingToolCalls.delete(chunk.toolCallId);
            this.#emit({ type: "message_update" });
          },
          onStepFinish: () => {
            text = "";
            this.state.streamingMessage = null;
            this.#emit({ type: "message_end" });
          },
          ...call,
        }),
      );
    } catch (error) {
      // What pi's Agent does with a failed run: an assistant message with the
      // error, shown in the transcript (never sent to the model again).
      const failed = {
        role: "assistant",
        content: [],
        api: "ai-sdk",
        provider: "ai-sdk",
        model: "",
        usage: zeroUsage(),
        stopReason: abort.signal.aborted ? "aborted" : "error",
        errorMessage: abort.signal.aborted ? "Request was aborted" : String(error?.message ?? error),
        timestamp: Date.now(),
      };
      await this.#conv.setMessages([...this.#conv.messages, failed]).catch((e) => this.#emit({ type: "save_error", error: e }));
      this.#emit({ type: "message_end", message: failed });
    }
  }
}
