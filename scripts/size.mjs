// `npm run size`: where the package's bytes go, by area, in its wasm
// module (loaded at import), and the JS files it ships.
//
// Rebuilds the wasm exactly as scripts/build.mjs does (same cargo profile,
// wasm-bindgen and wasm-opt flags, from scripts/lib/wasm-steps.mjs) but keeps
// the function names (`wasm-opt -g`), then reads the module itself (no
// dependency): every function's code bytes go to an area chosen by its symbol
// path. A function whose name names no area (a monomorphized iterator, Vec or
// closure adapter, a future's poll wrapper) goes to the area of its immediate
// dominator in the call graph, i.e. the one function every call to it passes
// through, or failing that to the area its callees mostly belong to. Static
// data is cut at every address some function's code names (`i32.const`), and
// each piece goes to the area of the functions that name it.
// Gzipped sizes per area are estimates: each area's bytes gzipped on their
// own, scaled so that they add up to the real gzipped size of the module.
// The JS files the package ships are listed with their real sizes.
//
//   node scripts/size.mjs             build, then print the table
//   node scripts/size.mjs --no-build  reuse target/ (after a build.mjs run)
//   SIZE_BUILD=1 node scripts/size.mjs   the optional size build's module
//   node scripts/size.mjs --top 15    also list each area's 15 largest functions
//   node scripts/size.mjs --json      machine-readable
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { NAME, bindgen, cargoBuild, optimize, shortImports } from "./lib/wasm-steps.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const topIndex = args.indexOf("--top");
const top = topIndex >= 0 ? Number(args[topIndex + 1] ?? 10) : 0;

// Areas, first match wins. Each is tried against the whole (demangled) name,
// so `<agent_compaction_core::session_file::Error as Display>::fmt` is a
// session-file function.
const AREAS = [
  ["session files (pi JSONL)", [/agent_compaction_core::session_file\b/, /agent_compaction::session_file\b/, /agent_compaction::storage::jsonl\b/]],
  ["store (IndexedDB)", [/agent_compaction::storage\b/, /agent_compaction_core::storage\b/, /indexed_db_futures/, /web_sys::features::gen_Idb/, /\btokio\b/, /\bfutures_(channel|util|core)\b/]],
  ["extractive summarizer", [/compaction::extractive\b/]],
  ["history search", [/agent_compaction_core::history\b/, /agent_compaction::history\b/]],
  ["fetch summarizers", [/agent_compaction::providers\b/]],
  ["clearing tier (tool output)", [/agent_compaction_core::compaction::clearing\b/, /agent_compaction::clearing\b/]],
  ["compactor / flow", [/agent_compaction::(compactor|compaction|agent_flow|conversation|undo)\b/, /agent_compaction_core::compaction::(flow|agent_flow)\b/]],
  ["core: JS semantics (json, numbers, dates, strings)", [/agent_compaction_core::js\b/, /agent_compaction::js::engine\b/]],
  ["core: tokens, cut point, prepare, serialize, messages, settings", [/agent_compaction_core::/]],
  ["binding: messages, estimate, prepare, settings, errors", [/agent_compaction::/]],
  ["wasm-bindgen glue (+ js-sys, web-sys)", [/^wasm_bindgen|[<\s]wasm_bindgen(?!_futures)\b|\bjs_sys::(?!futures)|\bweb_sys::|\bgloo|__wbindgen|__wbg|__externref|^__wasm_bindgen/]],
  ["std: core::fmt, float printing, panics", [/\bfmt\b|flt2dec|dragon|grisu|panic|unicode::printable|escape_debug|Debug|Display|\bLocation\b|unwrap_failed|expect_failed|slice_error_fail|_index_len_fail|_index_order_fail|_end_index|_start_index/]],
  ["std: allocator, strings, collections, other", [/dlmalloc|__rdl|__rust|\bcore\[|\balloc\[|\bstd\[|compiler_builtins|memcpy|memmove|memset|memcmp|\bhashbrown\b/]],
];
// A function whose name fits no area above is "generic": it takes its area
// from the call graph.
const STD_FALLBACK = "std: allocator, strings, collections, other";

function build() {
  const out = join(root, "target/size");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const dir = process.env.SIZE_BUILD === "1" ? "target/pkg-size" : "target/pkg";
  const raw = flag("--no-build") ? join(root, dir, "wasm32-unknown-unknown/release/agent_compaction.wasm") : cargoBuild(root);
  if (!existsSync(raw)) throw new Error(`${relative(root, raw)} is missing: run without --no-build`);
  const { wasm: bound } = bindgen(root, raw, join(out, "bindgen"));
  const named = join(out, `${NAME}_bg.named.wasm`);
  optimize(root, bound, named, { names: true });
  shortImports(named);
  const shipped = join(out, `${NAME}_bg.wasm`);
  optimize(root, bound, shipped);
  shortImports(shipped);
  return { named, shipped };
}

/** Reads the parts of a wasm module this report needs. */
function parse(bytes) {
  let p = 8;
  const u = () => {
    let r = 0, s = 0, x;
    do {
      x = bytes[p++];
      r += (x & 0x7f) * 2 ** s;
      s += 7;
    } while (x & 0x80);
    return r;
  };
  const i = () => {
    // Signed LEB128 (values fit in a double for the i32 constants we use).
    let r = 0n, s = 0n, x;
    do {
      x = bytes[p++];
      r |= BigInt(x & 0x7f) << s;
      s += 7n;
    } while (x & 0x80);
    if (x & 0x40) r -= 1n << s;
    return r;
  };
  const name = () => {
    const n = u();
    const t = bytes.subarray(p, p + n).toString();
    p += n;
    return t;
  };
  const limits = () => {
    const f = u();
    u();
    if (f & 1) u();
  };
  const constExpr = () => {
    // An init expression: we only need i32.const's value.
    let value = null;
    for (;;) {
      const op = bytes[p++];
      if (op === 0x0b) return value;
      if (op === 0x41) value = Number(BigInt.asIntN(32, i()));
      else if (op === 0x42) i();
      else if (op === 0x23 || op === 0xd2) u();
      else if (op === 0xd0) p++;
      else throw new Error(`unexpected opcode 0x${op.toString(16)} in an init expression`);
    }
  };
  const m = { imported: 0, funcs: [], names: new Map(), exports: [], elems: [], start: null, data: [], sections: [] };
  while (p < bytes.length) {
    const id = bytes[p++];
    const len = u();
    const begin = p;
    const end = begin + len;
    m.sections.push({ id, begin, end });
    if (id === 2) {
      for (let n = u(); n > 0; n--) {
        name();
        name();
        const kind = bytes[p++];
        if (kind === 0) {
          u();
          m.imported++;
        } else if (kind === 1) {
          p++;
          limits();
        } else if (kind === 2) limits();
        else if (kind === 3) p += 2;
        else if (kind === 4) {
          p++;
          u();
        }
      }
    } else if (id === 7) {
      for (let n = u(); n > 0; n--) {
        name();
        const kind = bytes[p++];
        const index = u();
        if (kind === 0) m.exports.push(index);
      }
    } else if (id === 8) m.start = u();
    else if (id === 9) {
      for (let n = u(); n > 0; n--) {
        // Flags: bit 0 passive/declarative, bit 1 explicit table (or
        // declarative), bit 2 expressions instead of function indices.
        const f = u();
        if ((f & 3) === 2) u();
        if (!(f & 1)) constExpr();
        if (f & 3) p++;
        for (let k = u(); k > 0; k--) {
          if (!(f & 4)) m.elems.push(u());
          else {
            const op = bytes[p++];
            if (op === 0xd2) m.elems.push(u());
            else if (op === 0xd0) p++;
            if (bytes[p++] !== 0x0b) throw new Error("unexpected element expression");
          }
        }
      }
    } else if (id === 10) {
      const n = u();
      for (let k = 0; k < n; k++) {
        const size = u();
        m.funcs.push({ index: m.imported + k, begin: p, end: p + size });
        p += size;
      }
    } else if (id === 11) {
      for (let n = u(); n > 0; n--) {
        const f = u();
        if (f === 2) u();
        const offset = f === 1 ? null : constExpr();
        const size = u();
        m.data.push({ offset, begin: p, end: p + size });
        p += size;
      }
    } else if (id === 0 && name() === "name") {
      while (p < end) {
        const sub = bytes[p++];
        const subLen = u();
        const subEnd = p + subLen;
        if (sub === 1) for (let n = u(); n > 0; n--) m.names.set(u(), name());
        p = subEnd;
      }
    }
    p = end;
  }
  // Each function body: the functions it calls or takes a reference to, and
  // the i32 constants it holds (candidate data addresses).
  for (const f of m.funcs) {
    f.calls = new Set();
    f.consts = [];
    p = f.begin;
    for (let groups = u(); groups > 0; groups--) {
      u();
      p++;
    }
    while (p < f.end) {
      const op = bytes[p++];
      if (op === 0x02 || op === 0x03 || op === 0x04) i();
      else if (op === 0x0c || op === 0x0d) u();
      else if (op === 0x0e) {
        for (let n = u(); n >= 0; n--) u();
      } else if (op === 0x10 || op === 0x12 || op === 0xd2) f.calls.add(u());
      else if (op === 0x11 || op === 0x13) {
        u();
        u();
      } else if (op === 0x1c) {
        for (let n = u(); n > 0; n--) p++;
      } else if (op >= 0x20 && op <= 0x26) u();
      else if (op >= 0x28 && op <= 0x3e) {
        const align = u();
        if (align & 0x40) u();
        u();
      } else if (op === 0x3f || op === 0x40) u();
      else if (op === 0x41) f.consts.push(Number(BigInt.asIntN(32, i())));
      else if (op === 0x42) i();
      else if (op === 0x43) p += 4;
      else if (op === 0x44) p += 8;
      else if (op === 0xd0) p++;
      else if (op === 0xfc) {
        const sub = u();
        if (sub === 8) {
          u();
          u();
        } else if (sub === 9 || sub === 13 || (sub >= 15 && sub <= 17)) u();
        else if (sub === 10 || sub === 12 || sub === 14) {
          u();
          u();
        } else if (sub === 11) u();
      } else if (op === 0xfd) throw new Error("SIMD instructions are not expected in this module");
    }
  }
  return m;
}

/** Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm); node 0 is a virtual root. */
function dominators(count, succ) {
  const order = [];
  const seen = new Uint8Array(count);
  const stack = [[0, 0]];
  seen[0] = 1;
  while (stack.length) {
    const top = stack[stack.length - 1];
    const next = succ[top[0]][top[1]++];
    if (next === undefined) {
      order.push(top[0]);
      stack.pop();
    } else if (!seen[next]) {
      seen[next] = 1;
      stack.push([next, 0]);
    }
  }
  const post = new Int32Array(count).fill(-1);
  order.forEach((n, k) => (post[n] = k));
  const preds = Array.from({ length: count }, () => []);
  succ.forEach((list, n) => list.forEach((s) => preds[s].push(n)));
  const idom = new Int32Array(count).fill(-1);
  idom[0] = 0;
  const intersect = (a, b) => {
    while (a !== b) {
      while (post[a] < post[b]) a = idom[a];
      while (post[b] < post[a]) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let k = order.length - 1; k >= 0; k--) {
      const n = order[k];
      if (n === 0) continue;
      let d = -1;
      for (const q of preds[n]) if (idom[q] !== -1) d = d === -1 ? q : intersect(q, d);
      if (d !== idom[n]) {
        idom[n] = d;
        changed = true;
      }
    }
  }
  return idom;
}

function report(namedPath, shippedPath) {
  const bytes = readFileSync(namedPath);
  const m = parse(bytes);
  const byIndex = new Map(m.funcs.map((f) => [f.index, f]));
  // Without the crates' disambiguators (`core[27cd0353e63fa9bc]::`), which
  // names compiled with the std the build compiles itself carry.
  const nameOf = (index) => (m.names.get(index) ?? `func[${index}]`).replace(/\[[0-9a-f]{16}\]/g, "");
  const own = (f) => {
    const n = nameOf(f.index);
    if (/^js_sys::futures::|^wasm_bindgen_futures::/.test(n)) return null;
    for (const [area, patterns] of AREAS) if (patterns.some((r) => r.test(n))) return area;
    return null;
  };
  // Call graph over defined functions: node 0 is the root (exports, start
  // function and the indirect-call table), function k is node k + 1.
  const node = (index) => index - m.imported + 1;
  const succ = [[]];
  const roots = new Set([...m.exports, ...m.elems, ...(m.start === null ? [] : [m.start])]);
  for (const r of roots) if (byIndex.has(r)) succ[0].push(node(r));
  for (const f of m.funcs) succ.push([...f.calls].filter((c) => byIndex.has(c)).map(node));
  const idom = dominators(m.funcs.length + 1, succ);
  const area = new Array(m.funcs.length + 1).fill(undefined);
  const sizeOf = (f) => f.end - f.begin;
  const resolve = (n, visiting = new Set()) => {
    if (n === 0) return null;
    if (area[n] !== undefined) return area[n];
    const f = m.funcs[n - 1];
    let a = own(f);
    if (a === null && idom[n] > 0) a = resolve(idom[n], visiting);
    if (a === null && !visiting.has(n)) {
      // Dominated by the root only (called from several areas, or through
      // the table): the area most of its callees' bytes belong to.
      visiting.add(n);
      const weight = new Map();
      for (const c of succ[n]) {
        const ca = resolve(c, visiting);
        if (ca) weight.set(ca, (weight.get(ca) ?? 0) + sizeOf(m.funcs[c - 1]));
      }
      visiting.delete(n);
      a = [...weight].sort((x, y) => y[1] - x[1])[0]?.[0] ?? null;
    }
    if (a === null) a = STD_FALLBACK;
    area[n] = a;
    return a;
  };
  const rows = new Map();
  const row = (name) => {
    if (!rows.has(name)) rows.set(name, { name, raw: 0, code: 0, data: 0, parts: [], funcs: [] });
    return rows.get(name);
  };
  for (const [name] of AREAS) row(name);
  for (let n = 1; n <= m.funcs.length; n++) {
    const f = m.funcs[n - 1];
    const r = row(resolve(n));
    r.code += sizeOf(f);
    r.parts.push(bytes.subarray(f.begin, f.end));
    r.funcs.push([sizeOf(f), nameOf(f.index)]);
  }
  // Static data, cut at each address some function names.
  const refs = new Map();
  for (let n = 1; n <= m.funcs.length; n++) {
    for (const c of m.funcs[n - 1].consts) {
      if (!refs.has(c)) refs.set(c, new Set());
      refs.get(c).add(area[n]);
    }
  }
  for (const seg of m.data) {
    if (seg.offset === null) {
      row("static data (unattributed)").data += seg.end - seg.begin;
      continue;
    }
    const len = seg.end - seg.begin;
    const cuts = [...refs.keys()].filter((a) => a > seg.offset && a < seg.offset + len).sort((a, b) => a - b);
    const starts = [seg.offset, ...cuts];
    starts.forEach((s, k) => {
      const e = k + 1 < starts.length ? starts[k + 1] : seg.offset + len;
      const owners = refs.get(s);
      const name = !owners ? "static data (unattributed)" : owners.size === 1 ? [...owners][0] : "static data (shared by several areas)";
      const r = row(name);
      r.data += e - s;
      r.parts.push(bytes.subarray(seg.begin + (s - seg.offset), seg.begin + (e - seg.offset)));
    });
  }
  // The rest of the module: types, imports, exports, table, globals.
  const structure = row("module structure (types, imports, exports, table)");
  for (const s of m.sections) {
    if (s.id !== 0 && s.id !== 10 && s.id !== 11) {
      structure.data += s.end - s.begin;
      structure.parts.push(bytes.subarray(s.begin, s.end));
    }
  }
  const shipped = readFileSync(shippedPath);
  const realGzip = gzipSync(shipped, { level: 9 }).length;
  const list = [...rows.values()].filter((r) => r.code + r.data > 0);
  for (const r of list) {
    r.raw = r.code + r.data;
    r.gzipAlone = gzipSync(Buffer.concat(r.parts), { level: 9 }).length;
  }
  const sumAlone = list.reduce((s, r) => s + r.gzipAlone, 0);
  for (const r of list) r.gzip = Math.round((r.gzipAlone * realGzip) / sumAlone);
  list.sort((a, b) => b.gzip - a.gzip);
  const totalRaw = list.reduce((s, r) => s + r.raw, 0);

  return { raw: shipped.length, gzip: realGzip, rows: list, totalRaw };
}

// Every JS file the package ships, from pkg/ (real sizes).
function shippedJs() {
  const pkg = join(root, "pkg");
  if (!existsSync(pkg)) return [];
  const walk = (dir) =>
    readdirSync(join(pkg, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
    );
  return walk("").sort().map((name) => {
    const b = readFileSync(join(pkg, name));
    return { name, raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
  });
}

const { named, shipped } = build();
const results = [{ module: NAME, wasm: report(named, shipped), js: shippedJs() }];
if (flag("--json")) {
  const clean = (w) => ({
    raw: w.raw,
    gzip: w.gzip,
    areas: w.rows.map(({ name, raw, code, data, gzip, funcs }) => ({ name, raw, code, data, gzip, functions: funcs.length })),
  });
  console.log(JSON.stringify(results.map((r) => ({ module: r.module, wasm: clean(r.wasm), js: r.js })), null, 2));
} else {
  const kb = (n) => (n / 1024).toFixed(1).padStart(6);
  const pct = (n, d) => `${((100 * n) / d).toFixed(1).padStart(5)}%`;
  results.forEach((r) => {
    const w = r.wasm;
    console.log(`\n${r.module}_bg.wasm, loaded at import, by area (${kb(w.raw).trim()} KB raw, ${kb(w.gzip).trim()} KB gzipped; gzip per area is an estimate)\n`);
    console.log(`${"area".padEnd(64)} ${"raw KB".padStart(7)} ${"share".padStart(6)} ${"gzip KB".padStart(8)}  (code + data KB)`);
    for (const row of w.rows) {
      console.log(
        `${row.name.padEnd(64)} ${kb(row.raw)}  ${pct(row.raw, w.totalRaw)} ${kb(row.gzip)}   (${kb(row.code).trim()} + ${kb(row.data).trim()})`,
      );
      if (top > 0) {
        for (const [size, name] of row.funcs.sort((a, b) => b[0] - a[0]).slice(0, top)) console.log(`      ${String(size).padStart(6)}  ${name.slice(0, 110)}`);
      }
    }
    console.log(`\nthe package's JS (real sizes; ai-sdk.js and pi-agent-core.js load with their own entries, node.js and manual-init.js in place of index.js)\n`);
    for (const f of r.js) console.log(`${f.name.padEnd(64)} ${kb(f.raw)}          ${kb(f.gzip)}`);
    const jsGzip = r.js.reduce((s, f) => s + f.gzip, 0);
    console.log(`\ntotal (.wasm + every JS file): ${kb(w.gzip + jsGzip).trim()} KB gzipped`);
  });
}
