// A `bpeproof check --cmd` adapter in JavaScript: the npm package js-tiktoken on a rank file.
//
//   npm install js-tiktoken
//   bpeproof check --cmd 'node examples/adapters/js_tiktoken_adapter.mjs' --vocab cl100k_base.tiktoken
//
// The line protocol (README, "Check a tokenizer in any language"): one hello line, then one reply line
// per request line, until stdin ends. The vocabulary file comes from BPEPROOF_CHECK_VOCAB (set by the
// checker) or argv[2]; the regex from js-tiktoken's own encoding of that name (cl100k_base by default,
// BPEPROOF_CHECK_PATTERN or argv[3]: r50k, cl100k, o200k).
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createInterface } from "node:readline";
import { createRequire } from "node:module";

const require = createRequire(process.cwd() + "/");
const { Tiktoken } = require("js-tiktoken/lite");

const path = process.argv[2] ?? process.env.BPEPROOF_CHECK_VOCAB;
const name = process.argv[3] ?? process.env.BPEPROOF_CHECK_PATTERN ?? "cl100k";
const encodingName = { r50k: "r50k_base", cl100k: "cl100k_base", o200k: "o200k_base" }[name] ?? name;
const patStr = require(`js-tiktoken/ranks/${encodingName}`).pat_str;

let raw = readFileSync(path);
if (path.endsWith(".gz")) raw = gunzipSync(raw);
// js-tiktoken's rank format: lines "! <first rank> <base64 token> ...", consecutive ranks.
const lines = raw.toString("ascii").split("\n").filter(Boolean).map((line) => {
  const [token, rank] = line.split(" ");
  return `! ${rank} ${token}`;
});
const encoding = new Tiktoken({ pat_str: patStr, special_tokens: {}, bpe_ranks: lines.join("\n") });

const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
write({ protocol: "bpeproof-check", version: 1, name: `js-tiktoken ${encodingName}`, decode: true, special: false });

const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request === null) process.exit(0);
  const results = [];
  for (const text of request.encode ?? []) {
    try {
      results.push(encoding.encode(text, [], []));
    } catch (error) {
      results.push({ error: String(error) });
    }
  }
  for (const ids of request.decode ?? []) {
    try {
      results.push(encoding.decode(ids));
    } catch (error) {
      results.push({ error: String(error) });
    }
  }
  write({ results });
});
input.on("close", () => process.exit(0));
