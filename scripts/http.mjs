// Small node:http helpers shared by the local model (scripts/local-model.mjs)
// and the tests' mock LLM provider (tests/support/mock-llm-server.mjs): both
// answer browsers from another origin, so every response allows any origin.

export const CORS = { "access-control-allow-origin": "*" };

/** Ends `res` with `body` (CORS headers included). */
export function send(res, status, body, headers = {}) {
  res.writeHead(status, { ...CORS, ...headers });
  res.end(body);
}

/** Ends `res` with `json`, serialized. */
export function sendJson(res, status, json, headers = {}) {
  send(res, status, JSON.stringify(json), { "content-type": "application/json", ...headers });
}

/** The request body as text; rejects with `status` 413 past `limit` bytes. */
export function readBody(req, limit = 64 * 1024 * 1024) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > limit) {
        reject(Object.assign(new Error("request body too large"), { status: 413 }));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
