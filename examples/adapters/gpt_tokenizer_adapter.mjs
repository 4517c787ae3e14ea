// bpeproof check --cmd adapter for the npm package gpt-tokenizer (its bundled encodings).
//
//   npm install --prefix examples/adapters gpt-tokenizer@4.0.0
//   bpeproof check --cmd 'node examples/adapters/gpt_tokenizer_adapter.mjs' --vocab cl100k_base.tiktoken.gz
//
// The package bundles its encodings: the checker hands the pattern (BPEPROOF_CHECK_PATTERN), which picks one,
// and the adapter refuses a rank file of another encoding. Packages are found next to this file.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const require = createRequire(import.meta.url);
const name = process.env.BPEPROOF_CHECK_PATTERN;
const encodingName = { r50k: "r50k_base", cl100k: "cl100k_base", o200k: "o200k_base" }[name];
if (!encodingName) { write({ protocol: "bpeproof-check", error: `no bundled encoding for pattern ${name}` }); process.exit(0); }
const vocab = (process.env.BPEPROOF_CHECK_VOCAB ?? "").split("/").pop();
// The package bundles its own vocabularies: compare one only with the rank file of the same encoding.
if (!vocab.startsWith(encodingName)) {
  write({ protocol: "bpeproof-check", error: `this package bundles ${encodingName}; give its rank file, not ${vocab}` });
  process.exit(0);
}
const { encode, decode } = require(`gpt-tokenizer/cjs/encoding/${encodingName}`);
write({ protocol: "bpeproof-check", version: 1, name: `gpt-tokenizer ${encodingName}`, decode: true, special: false });
const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request === null) process.exit(0);
  const results = [];
  for (const text of request.encode ?? []) {
    try { results.push(encode(text, { disallowedSpecial: new Set() })); } catch (error) { results.push({ error: String(error) }); }
  }
  for (const ids of request.decode ?? []) {
    try { results.push(decode(ids)); } catch (error) { results.push({ error: String(error) }); }
  }
  write({ results });
});
input.on("close", () => process.exit(0));
