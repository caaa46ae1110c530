// A plain app importing the package by name, no init call (SPEC §0).
import { convertToLlm, transformContext } from "agent-compaction";

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

const out = document.getElementById("result");
try {
  const llm = convertToLlm(transformContext(messages));
  out.textContent = JSON.stringify({
    ok: true,
    count: llm.length,
    first: llm[0].content[0].text,
    sameObject: llm[1] === messages[3],
  });
} catch (err) {
  out.textContent = JSON.stringify({ ok: false, error: String(err?.stack ?? err) });
}
