// bpeproof check --cmd adapter for the npm package tiktoken (the WASM build of tiktoken, bundled encodings).
//
//   npm install --prefix examples/adapters tiktoken@1.0.22
//   bpeproof check --cmd 'node examples/adapters/tiktoken_wasm_adapter.mjs' --vocab cl100k_base.tiktoken.gz
//
// The package bundles its encodings: the checker hands the pattern, which picks one, and the adapter refuses a rank
// file of another encoding. Decoding keeps a leading U+FEFF (TextDecoder with ignoreBOM). Packages are found next
// to this file.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const require = createRequire(import.meta.url);
const encodingName = { r50k: "r50k_base", cl100k: "cl100k_base", o200k: "o200k_base" }[process.env.BPEPROOF_CHECK_PATTERN];
if (!encodingName) { write({ protocol: "bpeproof-check", error: "no bundled encoding for that pattern" }); process.exit(0); }
const vocab = (process.env.BPEPROOF_CHECK_VOCAB ?? "").split("/").pop();
// The package bundles its own vocabularies: compare one only with the rank file of the same encoding.
if (!vocab.startsWith(encodingName)) {
  write({ protocol: "bpeproof-check", error: `this package bundles ${encodingName}; give its rank file, not ${vocab}` });
  process.exit(0);
}
const { get_encoding } = require("tiktoken");
const encoding = get_encoding(encodingName);
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
write({ protocol: "bpeproof-check", version: 1, name: `tiktoken (WASM) ${encodingName}`, decode: true, special: false });
const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request === null) process.exit(0);
  const results = [];
  for (const text of request.encode ?? []) {
    try { results.push(Array.from(encoding.encode_ordinary(text))); } catch (error) { results.push({ error: String(error) }); }
  }
  for (const ids of request.decode ?? []) {
    try { results.push(utf8.decode(encoding.decode(Uint32Array.from(ids)))); } catch (error) { results.push({ error: String(error) }); }
  }
  write({ results });
});
input.on("close", () => process.exit(0));
