// bpeproof check --cmd adapter for the npm package gpt-3-encoder (GPT-2's vocabulary, bundled).
//
//   npm install --prefix examples/adapters gpt-3-encoder@1.1.4
//   bpeproof check --cmd 'node examples/adapters/gpt3_encoder_adapter.mjs' --vocab r50k_base.tiktoken.gz
//
// The package bundles GPT-2's vocabulary (= r50k_base): the adapter refuses any other file. Packages are found
// next to this file.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const require = createRequire(import.meta.url);
if (process.env.BPEPROOF_CHECK_PATTERN !== "r50k") { write({ protocol: "bpeproof-check", error: "gpt-3-encoder has GPT-2's r50k only" }); process.exit(0); }
const vocab = (process.env.BPEPROOF_CHECK_VOCAB ?? "").split("/").pop();
// The package bundles its own vocabulary: compare it only with the rank file of the same encoding.
if (!vocab.startsWith("r50k_base") && !vocab.startsWith("gpt2")) {
  write({ protocol: "bpeproof-check", error: `gpt-3-encoder bundles GPT-2's vocabulary; give its rank file (r50k_base.tiktoken), not ${vocab}` });
  process.exit(0);
}
const { encode, decode } = require("gpt-3-encoder");
write({ protocol: "bpeproof-check", version: 1, name: "gpt-3-encoder", decode: true, special: false });
const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request === null) process.exit(0);
  const results = [];
  for (const text of request.encode ?? []) {
    try { results.push(encode(text)); } catch (error) { results.push({ error: String(error) }); }
  }
  for (const ids of request.decode ?? []) {
    try { results.push(decode(ids)); } catch (error) { results.push({ error: String(error) }); }
  }
  write({ results });
});
input.on("close", () => process.exit(0));
