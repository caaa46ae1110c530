// Refits the calibrated estimate's weights (crates/core/src/tokens/calibrated.rs,
// WEIGHTS) against o200k_base on the corpus of tests/node/estimator-corpus.mjs:
// writes the corpus with its token counts to a temporary file, has the Rust
// classifier count its features (an ignored native test), and fits
// non-negative weights minimizing the squared relative error per sample, each
// class weighted alike. Prints the weights and per-class ratios; a developer
// tool (needs the gpt-tokenizer devDependency), not part of the build.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { buildCorpus } from "../tests/node/estimator-corpus.mjs";

const NAMES = ["word_piece", "word_letter", "digit_group", "punct_run", "punct_char", "space_run", "newline_run",
  "han", "kana", "hangul", "cjk_punct", "other_run", "other_char", "emoji_cluster", "emoji_code_point",
  "base64_char", "hex_char", "symbol", "long_run_unit"];

const corpus = buildCorpus({ seed: Number(process.env.SEED ?? 15) });
const classes = Object.keys(corpus);
const parts = [];
for (const [c, texts] of classes.map((k, i) => [i, corpus[k]])) {
  for (const t of texts) {
    const head = Buffer.alloc(16);
    head.writeUInt32LE(c, 0);
    head.writeUInt32LE(o200k(t), 4);
    head.writeUInt32LE(cl100k(t), 8);
    head.writeUInt32LE(t.length, 12);
    const body = Buffer.alloc(t.length * 2);
    for (let i = 0; i < t.length; i++) body.writeUInt16LE(t.charCodeAt(i), 2 * i);
    parts.push(head, body);
  }
}
const dir = mkdtempSync(path.join(os.tmpdir(), "fit-estimator-"));
const file = path.join(dir, "corpus.bin");
writeFileSync(file, Buffer.concat(parts));
const out = execFileSync("cargo", ["test", "-q", "-p", "agent-compaction-core", "--lib", "print_corpus_features", "--", "--ignored", "--nocapture"], {
  env: { ...process.env, ESTIMATOR_CORPUS: file },
  encoding: "utf8",
});
rmSync(dir, { recursive: true });
const rows = out.split("\n").filter((l) => l.startsWith("ROW,")).map((l) => l.split(",").slice(1).map(Number));
const perClass = classes.map((_, c) => rows.filter((r) => r[0] === c).length);

// Projected gradient descent on Σ_class (1/n_class) Σ_samples ((x·w - y) / y)².
const X = rows.map((r) => r.slice(4));
const Y = rows.map((r) => r[1]);
const sw = rows.map((r) => 1 / perClass[r[0]]);
let w = NAMES.map(() => 0.5);
for (let it = 0; it < 200000; it++) {
  const g = w.map(() => 0);
  for (let s = 0; s < X.length; s++) {
    const e = (X[s].reduce((a, x, j) => a + x * w[j], 0) - Y[s]) / Y[s];
    for (let j = 0; j < w.length; j++) g[j] += (2 * sw[s] * e * X[s][j]) / Y[s];
  }
  // Per-coordinate step scaled by the feature's magnitude.
  w = w.map((v, j) => Math.max(0, v - (0.02 * g[j]) / (1 + g[j] * g[j]) ** 0.25));
}
console.log(NAMES.map((n, j) => `    ${n}: ${w[j].toFixed(4)},`).join("\n"));
for (const [c, name] of classes.entries()) {
  const rs = rows.filter((r) => r[0] === c);
  const est = rs.reduce((a, r) => a + r.slice(4).reduce((b, x, j) => b + x * w[j], 0), 0);
  const real = rs.reduce((a, r) => a + r[1], 0);
  console.log(`${name.padEnd(18)} o200k ÷ estimate ${(real / est).toFixed(3)}`);
}
