// A `bpeproof check --cmd` adapter in JavaScript: the npm package js-tiktoken on a rank file.
//
//   npm install --prefix examples/adapters js-tiktoken
//   bpeproof check --cmd 'node examples/adapters/js_tiktoken_adapter.mjs' --vocab cl100k_base.tiktoken
//
// The line protocol (README, "Check a tokenizer in any language"): one hello line, then one reply line
// per request line, until stdin ends. The vocabulary file comes from BPEPROOF_CHECK_VOCAB and the pattern
// from BPEPROOF_CHECK_PATTERN (the checker always sets both: the pattern it compares against), or from
// argv[2] and argv[3]. js-tiktoken holds the regexes of r50k, cl100k and o200k only: any other pattern,
// and a file that is not a tiktoken rank file, is refused with a hello that holds an "error", never
// replaced by another pattern. Packages are found next to this file (its own node_modules, or a parent
// folder's), not in the current directory.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createInterface } from "node:readline";
import { createRequire } from "node:module";

const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const refuse = (message) => {
  write({ protocol: "bpeproof-check", version: 1, error: `js_tiktoken_adapter.mjs: ${message}` });
  process.exit(0);
};

const require = createRequire(import.meta.url);
let Tiktoken;
try {
  ({ Tiktoken } = require("js-tiktoken/lite"));
} catch (error) {
  refuse(`cannot load js-tiktoken next to the adapter (npm install --prefix <the adapter's folder> js-tiktoken): ${error.message.split("\n")[0]}`);
}

const path = process.argv[2] ?? process.env.BPEPROOF_CHECK_VOCAB;
const name = process.argv[3] ?? process.env.BPEPROOF_CHECK_PATTERN;
if (!path || !name) refuse(`needs a rank file and a pattern name, given ${path ?? "no file"} and ${name ?? "no pattern"}`);
const encodingName = { r50k: "r50k_base", cl100k: "cl100k_base", o200k: "o200k_base" }[name];
if (!encodingName) refuse(`js-tiktoken has no pattern ${JSON.stringify(name.slice(0, 60))} (it has r50k, cl100k, o200k)`);
const patStr = require(`js-tiktoken/ranks/${encodingName}`).pat_str;

let raw;
try {
  raw = readFileSync(path);
  if (path.endsWith(".gz")) raw = gunzipSync(raw);
} catch (error) {
  refuse(`cannot read ${path}: ${error.message}`);
}
// js-tiktoken's rank format: lines "! <first rank> <base64 token> ...", consecutive ranks.
const lines = [];
for (const line of raw.toString("latin1").split(/\r?\n/)) {
  if (!line.trim()) continue;
  const fields = line.trim().split(/\s+/);
  if (fields.length !== 2 || !/^[A-Za-z0-9+/]*={0,2}$/.test(fields[0]) || !/^[0-9]+$/.test(fields[1])) {
    refuse(`${path} is not a tiktoken rank file (the line ${JSON.stringify(line.slice(0, 40))} is not "base64 rank")`);
  }
  lines.push(`! ${fields[1]} ${fields[0]}`);
}
const encoding = new Tiktoken({ pat_str: patStr, special_tokens: {}, bpe_ranks: lines.join("\n") });

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
