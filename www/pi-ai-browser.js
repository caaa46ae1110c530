// What pi-agent-core 0.73 imports from "@mariozechner/pi-ai", for the demo's
// browser build (scripts/demo-build.mjs aliases the bare specifier
// "@mariozechner/pi-ai" to this file).
//
// pi-ai's own entry registers every provider (Anthropic, Google, Mistral,
// Bedrock, ...) and imports their SDKs on demand; some of those SDKs do not
// bundle for a browser (optional Node-only peers). The demo talks to
// OpenAI-compatible endpoints only, so this shim exposes the same four names
// pi-agent-core uses and routes `streamSimple` straight to pi-ai's own
// OpenAI Chat Completions provider — the same code pi-ai's registry would
// load for `api: "openai-completions"`.
import { streamSimpleOpenAICompletions } from "@mariozechner/pi-ai/openai-completions";

export { EventStream } from "../node_modules/@mariozechner/pi-ai/dist/utils/event-stream.js";
export { parseStreamingJson } from "../node_modules/@mariozechner/pi-ai/dist/utils/json-parse.js";
export { validateToolArguments } from "../node_modules/@mariozechner/pi-ai/dist/utils/validation.js";

/** pi-ai's `streamSimple` for the one API the demo uses. */
export function streamSimple(model, context, options) {
  if (model?.api !== "openai-completions") {
    throw new Error(`The demo only bundles pi-ai's "openai-completions" provider, not "${model?.api}"`);
  }
  return streamSimpleOpenAICompletions(model, context, options);
}
