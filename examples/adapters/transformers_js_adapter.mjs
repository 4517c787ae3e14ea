// bpeproof check --cmd adapter for Hugging Face transformers.js (npm @huggingface/transformers), whose tokenizers
// are pure JavaScript, on any tokenizer.json (plain or .gz):
//
//   npm install --prefix examples/adapters --ignore-scripts @huggingface/transformers@4.3.2
//   bpeproof check --cmd 'node examples/adapters/transformers_js_adapter.mjs' --vocab tokenizer.json
//
// The tokenizer is built from the file alone (no tokenizer_config.json, no download), as
// `new PreTrainedTokenizer(json, {})`; encode is `encode(text, { add_special_tokens: false })`, which reads every
// added token as the tokenizers library does (hello "special": "always"), and decode is the library's default
// `decode(ids)`. Packages are found next to this file.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const require = createRequire(import.meta.url);
const path = process.env.BPEPROOF_CHECK_VOCAB ?? "";
let tokenizer;
let version = "";
try {
  let data = readFileSync(path);
  if (data[0] === 0x1f && data[1] === 0x8b) data = gunzipSync(data);
  const json = JSON.parse(data.toString("utf8"));
  if (typeof json !== "object" || json === null || !("model" in json)) throw new Error(`${path} is not a tokenizer.json`);
  const { PreTrainedTokenizer, env } = require("@huggingface/transformers");
  version = env.version;
  tokenizer = new PreTrainedTokenizer(json, {});
} catch (error) {
  write({ protocol: "bpeproof-check", error: `transformers.js cannot read ${path}: ${error.message ?? error}` });
  process.exit(0);
}
write({ protocol: "bpeproof-check", version: 1, name: `transformers.js ${version}`, decode: true, special: "always" });
const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request === null) process.exit(0);
  const results = [];
  for (const text of request.encode ?? []) {
    try { results.push(tokenizer.encode(text, { add_special_tokens: false })); } catch (error) { results.push({ error: String(error) }); }
  }
  for (const ids of request.decode ?? []) {
    try { results.push(tokenizer.decode(ids)); } catch (error) { results.push({ error: String(error) }); }
  }
  write({ results });
});
input.on("close", () => process.exit(0));
