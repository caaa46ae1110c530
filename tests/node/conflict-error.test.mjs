// `ConflictError`, exported by every entry, is the class the store's
// conflicts are instances of (`SessionStore.ConflictError`), and
// `agent-compaction/manual-init` exports it before `init` is called.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

test("manual-init: ConflictError is a class before init, and the store's own after it", async () => {
  const m = await import("agent-compaction/manual-init");
  assert.equal(typeof m.ConflictError, "function");
  assert.ok(new m.ConflictError("x") instanceof Error);
  m.initSync({ module: readFileSync(new URL("../../pkg/agent_compaction_bg.wasm", import.meta.url)) });
  assert.equal(m.SessionStore.ConflictError, m.ConflictError);
});

test("the default entry's ConflictError is SessionStore.ConflictError", async () => {
  const m = await import("agent-compaction");
  assert.equal(m.SessionStore.ConflictError, m.ConflictError);
  assert.equal(new m.ConflictError("saved elsewhere").name, "ConflictError");
});
