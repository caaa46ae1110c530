// What the suites that run the documentation's examples in a page share:
// an example's JavaScript (its ```ts block, type-checked and compiled by
// tests/support/doc-examples.mjs), and serving a page's few files from
// memory.
import { readFile } from "node:fs/promises";
import { compileExamples } from "./doc-examples.mjs";

let compiled;

/** The JavaScript of the documentation's example `name`, as tsc emits it from the block written there. */
export async function readmeExample(name) {
  compiled ??= compileExamples();
  return readFile((await compiled).js(name), "utf8");
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
