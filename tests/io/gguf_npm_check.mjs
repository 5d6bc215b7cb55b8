// Compares @huggingface/gguf's reading of a GGUF file with tfdebug's (inspect --json).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(join(process.env.NODE_PATH, "noop.js"));
const { gguf } = await import(require.resolve("@huggingface/gguf"));
const [file, tfdebugJson] = process.argv.slice(2);
const theirs = await gguf(file, { allowLocalFile: true, computeParametersCount: true });
const ours = JSON.parse(readFileSync(tfdebugJson, "utf8"));

const ggmlNames = { 0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 12: "q4_k",
                    13: "q5_k", 14: "q6_k", 24: "i8", 25: "i16", 26: "i32", 27: "i64", 28: "f64", 30: "bf16" };
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const byName = new Map(ours.tensors.map((t) => [t.name, t]));
const undecoded = [];
let params = 0n;
for (const info of theirs.tensorInfos) {
  const shape = info.shape.map((d) => Number(d)).reverse();  // ne[0] innermost -> numpy order
  const mine = byName.get(info.name);
  if (!(info.dtype in ggmlNames)) {
    undecoded.push(`${info.name}`);
    check(!mine, `${info.name}: undecoded type ${info.dtype} should not be listed`);
    continue;
  }
  if (!mine) { failures.push(`${info.name}: missing from tfdebug`); continue; }
  check(JSON.stringify(mine.shape) === JSON.stringify(shape), `${info.name}: shape ${mine.shape} vs ${shape}`);
  check(mine.dtype === ggmlNames[info.dtype], `${info.name}: dtype ${mine.dtype} vs ${ggmlNames[info.dtype]}`);
  params += BigInt(mine.params);
}
check(ours.tensors.length === theirs.tensorInfos.length - undecoded.length, "tensor count");
const expectedParams = theirs.tensorInfos.filter((t) => t.dtype in ggmlNames)
  .reduce((n, t) => n + t.shape.reduce((a, d) => a * BigInt(d), 1n), 0n);
check(params === expectedParams, `parameters ${params} vs ${expectedParams}`);
if (undecoded.length) {
  check((ours.metadata["tfdebug.undecoded"] ?? "").includes(undecoded[0]), "undecoded tensors named in metadata");
}
// Metadata: every key the npm parser reports, as tfdebug's text.
for (const [key, value] of Object.entries(theirs.metadata)) {
  if (["version", "tensor_count", "kv_count"].includes(key)) continue;
  const mine = ours.metadata[key];
  if (Array.isArray(value)) {
    const shown = value.slice(0, 8).map(String).join(", ");
    check(mine !== undefined && mine.startsWith("[" + shown), `${key}: ${mine} vs [${shown}...]`);
  } else if (typeof value === "number" && !Number.isInteger(value)) {
    check(Math.abs(Number(mine) - value) <= 1e-7 * Math.abs(value), `${key}: ${mine} vs ${value}`);
  } else {
    check(mine === String(value), `${key}: ${mine} vs ${value}`);
  }
}
check(ours.metadata["gguf.version"] === String(theirs.metadata.version), "version");
if (failures.length) {
  console.log(`FAIL ${file}:\n  ` + failures.join("\n  "));
  process.exit(1);
}
console.log(`ok ${file}: ${theirs.tensorInfos.length} tensors, ${Object.keys(theirs.metadata).length} keys agree`);
