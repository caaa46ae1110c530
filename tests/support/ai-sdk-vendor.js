// The AI SDK for browser test pages: `ai` and @ai-sdk/openai-compatible in
// one ES module, bundled by tests/e2e/ai-sdk.test.mjs with Vite and mapped
// by the page's import map to both specifiers (as an app's bundler would
// resolve them).
export * from "ai";
export { createOpenAICompatible } from "@ai-sdk/openai-compatible";
