// The corpus the calibrated token estimate is fitted and tested against:
// texts of each kind an agent's context holds (English prose, TypeScript,
// JSON tool output with ids and numbers, Chinese, Japanese, emoji sequences,
// base64, mixed), generated here from word lists written for this file and a
// seeded PRNG, so every run builds the same texts. Imported by
// tests/node/estimator.test.mjs (and by the benchmark's accuracy table); it
// writes nothing anywhere.

/** mulberry32: a small deterministic PRNG. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (s) => s.trim().split(/\s+/);

const EN = {
  det: words("the a this that each every our their its some no another"),
  adj: words(`new old small large quick careful slow broken stable recent final
    simple complex useful strange quiet bright heavy empty local remote shared
    private public important unexpected previous following obvious hidden`),
  noun: words(`file system user request answer question model context window
    message session server client function result error change plan team
    report meeting decision library package browser memory budget summary
    garden river morning evening kitchen window teacher student village market
    afternoon problem solution deadline customer engineer manager document`),
  verb: words(`reads writes keeps sends finds checks moves builds breaks fixes
    explains describes changes loses remembers follows opens closes measures
    replaces prepares compares considers suggests supports`),
  adv: words(`quickly carefully slowly rarely often never always already still
    probably certainly quietly clearly eventually immediately`),
  prep: words("in on under after before with without near behind across through for about"),
  conj: words("and but because although while so when if unless since"),
  long: words(`responsibility configuration understanding misunderstanding
    approximately implementation characteristics internationalization
    disproportionate uncharacteristically acknowledgement photosynthesis`),
};

function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

function sentence(r) {
  const np = () => `${pick(r, EN.det)} ${r() < 0.5 ? pick(r, EN.adj) + " " : ""}${pick(r, EN.noun)}`;
  let s = `${np()} ${r() < 0.3 ? pick(r, EN.adv) + " " : ""}${pick(r, EN.verb)} ${np()}`;
  if (r() < 0.6) s += ` ${pick(r, EN.prep)} ${np()}`;
  if (r() < 0.4) s += `, ${pick(r, EN.conj)} ${np()} ${pick(r, EN.verb)} ${np()}`;
  if (r() < 0.15) s += ` with ${pick(r, EN.long)}`;
  s = s[0].toUpperCase() + s.slice(1);
  return s + (r() < 0.1 ? "?" : ".");
}

export function prose(r, chars) {
  const paragraphs = [];
  let n = 0;
  while (n < chars) {
    const k = 3 + Math.floor(r() * 5);
    const p = Array.from({ length: k }, () => sentence(r)).join(" ");
    paragraphs.push(p);
    n += p.length + 2;
  }
  return paragraphs.join("\n\n");
}

const ID_PARTS = words(`user session message token count window budget item list
  index cache store record entry value result error handler event state config
  options request response path name size limit offset total summary`);
const TYPES = words("string number boolean unknown Date Uint8Array");

function ident(r, parts = 1 + Math.floor(r() * 3)) {
  let s = pick(r, ID_PARTS);
  for (let i = 1; i < parts; i++) {
    const w = pick(r, ID_PARTS);
    s += w[0].toUpperCase() + w.slice(1);
  }
  return s;
}
const typeName = (r) => {
  const s = ident(r, 1 + Math.floor(r() * 2));
  return s[0].toUpperCase() + s.slice(1);
};

function tsFunction(r) {
  const name = ident(r);
  const args = Array.from({ length: 1 + Math.floor(r() * 3) }, () => `${ident(r, 1)}: ${pick(r, TYPES)}`);
  const lines = [`export function ${name}(${args.join(", ")}): ${typeName(r)} | undefined {`];
  const body = 2 + Math.floor(r() * 6);
  for (let i = 0; i < body; i++) {
    const v = ident(r);
    switch (Math.floor(r() * 6)) {
      case 0:
        lines.push(`  const ${v} = ${ident(r)}.${ident(r, 1)}(${Math.floor(r() * 1000)});`);
        break;
      case 1:
        lines.push(`  if (${v} === undefined || ${v}.length > ${Math.floor(r() * 100)}) {`);
        lines.push(`    throw new TypeError(\`${pick(r, EN.noun)} ${pick(r, EN.verb)} \${${v}}\`);`);
        lines.push("  }");
        break;
      case 2:
        lines.push(`  for (const ${ident(r, 1)} of ${v}) ${ident(r)}.push(${ident(r, 1)});`);
        break;
      case 3:
        lines.push(`  // ${sentence(r)}`);
        break;
      case 4:
        lines.push(`  let ${v}: ${pick(r, TYPES)}[] = [];`);
        break;
      default:
        lines.push(`  await ${ident(r)}({ ${ident(r, 1)}, ${ident(r, 1)}: "${pick(r, EN.noun)}" });`);
    }
  }
  lines.push(`  return ${ident(r)};`, "}");
  return lines.join("\n");
}

function tsInterface(r) {
  const fields = Array.from(
    { length: 2 + Math.floor(r() * 5) },
    () => `  ${r() < 0.3 ? "readonly " : ""}${ident(r)}${r() < 0.3 ? "?" : ""}: ${pick(r, TYPES)};`,
  );
  return [`/** ${sentence(r)} */`, `export interface ${typeName(r)} {`, ...fields, "}"].join("\n");
}

export function typescript(r, chars) {
  const parts = [`import { ${ident(r)}, ${ident(r)} } from "./${ident(r, 1)}.js";`];
  let n = parts[0].length;
  while (n < chars) {
    const p = r() < 0.3 ? tsInterface(r) : tsFunction(r);
    parts.push(p);
    n += p.length + 2;
  }
  return parts.join("\n\n");
}

const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const randomString = (r, alphabet, n) => Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]).join("");
const uuid = (r) => {
  const h = randomString(r, "0123456789abcdef", 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export function jsonToolOutput(r, chars) {
  const records = [];
  let n = 0;
  while (n < chars) {
    const rec = {
      id: `${pick(r, ["call", "toolu", "msg", "run"])}_${randomString(r, B62, 24)}`,
      uuid: uuid(r),
      name: ident(r),
      status: pick(r, ["ok", "pending", "failed", "skipped"]),
      size: Math.floor(r() * 1e6),
      score: Math.round(r() * 1e4) / 100,
      createdAt: new Date(1.7e12 + Math.floor(r() * 1e10)).toISOString(),
      tags: Array.from({ length: Math.floor(r() * 3) }, () => pick(r, EN.adj)),
      path: `src/${ident(r, 1)}/${ident(r)}.ts`,
      commit: randomString(r, "0123456789abcdef", 40),
    };
    records.push(rec);
    n += JSON.stringify(rec, null, 2).length;
  }
  return JSON.stringify({ total: records.length, items: records }, null, r() < 0.5 ? 2 : undefined);
}

const ZH = words(`我们 系统 文件 数据 用户 问题 时间 修改 配置 服务器 程序 代码 测试 结果
  需要 可以 已经 因为 所以 但是 如果 然后 这个 那个 一个 没有 发现 检查 更新 删除 保存 读取
  写入 请求 回答 模型 上下文 窗口 消息 会话 错误 计划 团队 报告 会议 决定 今天 明天 昨天 早上
  晚上 工作 学习 朋友 城市 天气 经济 发展 社会 历史 文化 技术 研究 方法 重要 简单 复杂 清楚
  继续 开始 完成 提供 支持 使用 处理 分析 记录 变化 环境 内容 部分 情况 过程 目标 能力`);

export function chinese(r, chars) {
  let s = "";
  while (s.length < chars) {
    const k = 4 + Math.floor(r() * 10);
    for (let i = 0; i < k; i++) {
      s += pick(r, ZH);
      if (i > 0 && i < k - 1 && r() < 0.15) s += "，";
      else if (r() < 0.3) s += pick(r, ["的", "了", "在", "是", "和", "也", "都", "就"]);
    }
    s += r() < 0.1 ? "？" : "。";
    if (r() < 0.15) s += "\n";
  }
  return s;
}

const JA_KANJI = words(`会議 資料 確認 設定 変更 作業 予定 問題 結果 時間 今日 明日 先週 東京
  大阪 天気 電車 会社 仕事 説明 準備 連絡 報告 検討 対応 必要 簡単 重要 最近 全部 意見 理由`);
const JA_KATA = words(`ファイル データ サーバー ユーザー メッセージ システム プログラム テスト
  エラー セッション ブラウザ メモリ コード モデル チーム レポート`);
const JA_TAIL = words(`です ます でした ました しています します ください ですね でしょう
  ません と思います かもしれません`);
const JA_PART = words("は が を に で と の も から まで へ");

export function japanese(r, chars) {
  let s = "";
  while (s.length < chars) {
    const k = 2 + Math.floor(r() * 4);
    for (let i = 0; i < k; i++) {
      s += r() < 0.6 ? pick(r, JA_KANJI) : pick(r, JA_KATA);
      s += pick(r, JA_PART);
      if (r() < 0.15) s += "、";
    }
    s += r() < 0.5 ? pick(r, JA_KANJI) : pick(r, JA_KATA);
    s += pick(r, JA_TAIL) + (r() < 0.1 ? "？" : "。");
    if (r() < 0.15) s += "\n";
  }
  return s;
}

const EMOJI_SIMPLE = [..."😀😂🥲😍🤔😴😭😡👍👎👏🙏🔥✨🎉🚀💡📦🐛✅❌⚠️📝🔧🌍🍕☕🐱🐶🌸🌧️"]
  .join("")
  .match(/\p{Extended_Pictographic}\uFE0F?/gu);
const SKIN = ["\u{1F3FB}", "\u{1F3FC}", "\u{1F3FD}", "\u{1F3FE}", "\u{1F3FF}"];
const ZWJ = [
  "👨‍👩‍👧‍👦", "👩‍💻", "🧑‍🚀", "👨‍🍳", "🏳️‍🌈", "❤️‍🔥", "🐻‍❄️", "👩‍❤️‍👨", "🧑‍🤝‍🧑", "😶‍🌫️",
];
const FLAGS = ["FR", "JP", "BR", "DE", "KE", "IN", "CA", "NZ"].map((c) =>
  String.fromCodePoint(...[...c].map((ch) => 0x1f1e6 + ch.charCodeAt(0) - 65)),
);

export function emoji(r, chars) {
  let s = "";
  while (s.length < chars) {
    const x = r();
    if (x < 0.45) s += pick(r, EMOJI_SIMPLE);
    else if (x < 0.6) s += pick(r, ["👋", "👍", "🙌", "💪", "🤞"]) + pick(r, SKIN);
    else if (x < 0.8) s += pick(r, ZWJ);
    else if (x < 0.92) s += pick(r, FLAGS);
    else s += pick(r, ["1️⃣", "#️⃣", "🔟"]);
    if (r() < 0.2) s += r() < 0.2 ? "\n" : " ";
  }
  return s;
}

export function base64(r, chars) {
  const bytes = new Uint8Array(Math.ceil((chars * 3) / 4));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256);
  const text = Buffer.from(bytes).toString("base64");
  // As tool output shows it: wrapped at 76 columns half of the time.
  return r() < 0.5 ? text : text.match(/.{1,76}/g).join("\n");
}

export function mixed(r, chars) {
  const parts = [];
  let n = 0;
  while (n < chars) {
    let p;
    switch (Math.floor(r() * 7)) {
      case 0:
      case 1:
        p = prose(r, 200);
        break;
      case 2:
        p = "```ts\n" + typescript(r, 200) + "\n```";
        break;
      case 3:
        p = jsonToolOutput(r, 150);
        break;
      case 4:
        p = chinese(r, 60);
        break;
      case 5:
        p = japanese(r, 60);
        break;
      default:
        p = `${sentence(r)} ${emoji(r, 8)} (#${Math.floor(r() * 10000)}, ${uuid(r)})`;
    }
    parts.push(p);
    n += p.length + 1;
  }
  return parts.join("\n");
}

export const CLASSES = {
  "English prose": prose,
  "TypeScript code": typescript,
  "JSON tool output": jsonToolOutput,
  Chinese: chinese,
  Japanese: japanese,
  "emoji sequences": emoji,
  base64,
  "mixed text": mixed,
};

/** `{ class: [text, ...] }`: `samples` texts per class, of 200 to ~4,000 code units. */
export function buildCorpus({ seed = 15, samples = 24 } = {}) {
  const out = {};
  let k = 0;
  for (const [name, make] of Object.entries(CLASSES)) {
    const texts = [];
    for (let i = 0; i < samples; i++) {
      const r = rng(seed * 1000 + k++);
      texts.push(make(r, 200 + Math.floor(r() * 3800)));
    }
    out[name] = texts;
  }
  return out;
}
