// What the README-example suites share: cutting an example's code block out
// of README.md (the block after its `<!-- example: NAME … -->` marker), and
// serving a page's few files from memory.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";

const README = new URL("../../README.md", import.meta.url);

/** The code of the README's example `name`, as written there. */
export async function readmeExample(name) {
  const text = await readFile(README, "utf8");
  const at = text.indexOf(`<!-- example: ${name}`);
  assert.ok(at >= 0, `the README still has the example "${name}"`);
  const start = text.indexOf("```js\n", at) + "```js\n".length;
  return text.slice(start, text.indexOf("\n```", start));
}

/**
 * A request handler (scripts/serve.mjs) serving `files`, a map from a URL
 * path to `[body, content type]`; false for any other path.
 */
export function filesHandler(files) {
  return (req, res, url) => {
    const file = files[url.pathname];
    if (!file) return false;
    res.writeHead(200, { "content-type": `${file[1]}; charset=utf-8` });
    res.end(file[0]);
    return true;
  };
}
