// A small coding-agent session in the flat-array shape (pi-ai `Message`s plus
// one `compactionSummary`): the first task was compacted, the conversation
// went on after the summary.

const T0 = Date.UTC(2025, 10, 20, 9, 30, 0);
const at = (seconds) => T0 + seconds * 1000;

const usage = (input, output, cacheRead = 0, cacheWrite = 0) => {
  const cost = {
    input: input * 3e-6,
    output: output * 15e-6,
    cacheRead: cacheRead * 0.3e-6,
    cacheWrite: cacheWrite * 3.75e-6,
  };
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { ...cost, total: cost.input + cost.output + cost.cacheRead + cost.cacheWrite },
  };
};

const model = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };

const VALIDATE_TS = `export function isValidEmail(email: string): boolean {
  return /^[a-z0-9._-]+@[a-z0-9.-]+\\.[a-z]{2,}$/i.test(email);
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
`;

export const SAMPLE_SESSION = [
  {
    role: "user",
    content: [
      {
        type: "text",
        text: "Sign-up rejects addresses like jane+news@example.com with \"invalid email\". Can you find the validator and fix it?",
      },
    ],
    timestamp: at(0),
  },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Let me look at the email validation code." },
      { type: "toolCall", id: "toolu_01", name: "read", arguments: { path: "src/auth/validate.ts" } },
    ],
    ...model,
    usage: usage(3, 62, 0, 4180),
    stopReason: "toolUse",
    timestamp: at(4),
  },
  {
    role: "toolResult",
    toolCallId: "toolu_01",
    toolName: "read",
    content: [{ type: "text", text: VALIDATE_TS }],
    isError: false,
    timestamp: at(5),
  },
  {
    role: "assistant",
    content: [
      {
        type: "thinking",
        thinking: "The local-part character class is [a-z0-9._-]: no '+'. RFC 5321 allows it; add + and a few other common characters.",
      },
      { type: "text", text: "The local part doesn't allow `+`. Fixing the character class." },
      {
        type: "toolCall",
        id: "toolu_02",
        name: "edit",
        arguments: {
          path: "src/auth/validate.ts",
          oldText: "/^[a-z0-9._-]+@",
          newText: "/^[a-z0-9._%+-]+@",
        },
      },
    ],
    ...model,
    usage: usage(5, 141, 4180, 310),
    stopReason: "toolUse",
    timestamp: at(11),
  },
  {
    role: "toolResult",
    toolCallId: "toolu_02",
    toolName: "edit",
    content: [{ type: "text", text: "Successfully replaced text in src/auth/validate.ts." }],
    isError: false,
    timestamp: at(12),
  },
  {
    role: "assistant",
    content: [
      {
        type: "text",
        text: "Fixed: `isValidEmail` now accepts `+` (and `%`) in the local part, so jane+news@example.com passes.",
      },
    ],
    ...model,
    usage: usage(4, 38, 4490, 120),
    stopReason: "stop",
    timestamp: at(15),
  },
  {
    role: "compactionSummary",
    summary: [
      "## Goal",
      "Fix sign-up rejecting email addresses that contain a plus sign (e.g. jane+news@example.com).",
      "",
      "## Constraints & Preferences",
      "- Keep the validator a single regex; no new dependencies.",
      "",
      "## Progress",
      "### Done",
      "- [x] Found `isValidEmail` in src/auth/validate.ts: the local part was `[a-z0-9._-]+`.",
      "- [x] Changed it to `[a-z0-9._%+-]+`.",
      "",
      "### In Progress",
      "- (none)",
      "",
      "### Blocked",
      "- (none)",
      "",
      "## Key Decisions",
      "- **Allow + and %**: both are valid in the local part and common in practice.",
      "",
      "## Next Steps",
      "1. Add a regression test for plus addresses.",
      "",
      "## Critical Context",
      "- Tests run with `npm test` (vitest).",
    ].join("\n"),
    tokensBefore: 9350,
    details: { readFiles: ["src/auth/validate.ts"], modifiedFiles: ["src/auth/validate.ts"] },
    timestamp: at(600),
  },
  {
    role: "user",
    content: "Great. Add a regression test for it and run the suite.",
    timestamp: at(660),
  },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Adding a test file for the validator." },
      {
        type: "toolCall",
        id: "toolu_03",
        name: "write",
        arguments: {
          path: "tests/validate.test.ts",
          content: [
            'import { describe, expect, it } from "vitest";',
            'import { isValidEmail } from "../src/auth/validate";',
            "",
            'describe("isValidEmail", () => {',
            '  it("accepts plus addresses", () => expect(isValidEmail("jane+news@example.com")).toBe(true));',
            '  it("rejects a missing domain", () => expect(isValidEmail("jane@")).toBe(false));',
            "});",
            "",
          ].join("\n"),
        },
      },
    ],
    ...model,
    usage: usage(6, 203, 2950, 160),
    stopReason: "toolUse",
    timestamp: at(664),
  },
  {
    role: "toolResult",
    toolCallId: "toolu_03",
    toolName: "write",
    content: [{ type: "text", text: "Successfully wrote 312 bytes to tests/validate.test.ts" }],
    isError: false,
    timestamp: at(665),
  },
  {
    role: "assistant",
    content: [{ type: "toolCall", id: "toolu_04", name: "bash", arguments: { command: "npm test -- tests/validate.test.ts" } }],
    ...model,
    usage: usage(3, 41, 3110, 250),
    stopReason: "toolUse",
    timestamp: at(668),
  },
  {
    role: "toolResult",
    toolCallId: "toolu_04",
    toolName: "bash",
    content: [
      {
        type: "text",
        text: [
          "> app@1.4.0 test",
          "> vitest run tests/validate.test.ts",
          "",
          " ✓ tests/validate.test.ts (2 tests) 4ms",
          "",
          " Test Files  1 passed (1)",
          "      Tests  2 passed (2)",
          "   Duration  412ms",
        ].join("\n"),
      },
    ],
    isError: false,
    timestamp: at(671),
  },
  {
    role: "assistant",
    content: [
      {
        type: "text",
        text: "Both tests pass. The fix is in src/auth/validate.ts and the regression test in tests/validate.test.ts.",
      },
    ],
    ...model,
    usage: usage(4, 35, 3360, 190),
    stopReason: "stop",
    timestamp: at(675),
  },
];
