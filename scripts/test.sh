#!/usr/bin/env bash
# The whole test run, as CI does it (`npm test`, `.ci/run`):
#   setup (with the browser) -> build -> typecheck tests -> cargo test (whole workspace) -> vitest (Node) -> vitest (browser)
# Setup and build stop the run when they fail; the three test steps all run, so one failure does
# not hide another, and the exit status is non-zero if any of them failed. The last line sums the
# counts of all three.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi

artifacts="$root/test-results"
rm -rf "$artifacts"
mkdir -p "$artifacts"

banner() { printf '\n==> %s\n' "$*"; }

banner "setup"
bash scripts/setup.sh --browser

banner "build"
node scripts/build.mjs

banner "typecheck tests"
npx --no-install tsc -p tests/tsconfig.json

failed_steps=()

banner "cargo test (wasm/ workspace; the test profile: optimized, overflow checks on)"
# webmpc-baseline (the bench-only Wasm module: baselines and in-Wasm bench runners) has no tests;
# its native cdylib was the slowest single unit of the build; the Wasm build compiles it.
if (cd wasm && cargo test --workspace --exclude webmpc-baseline 2>&1) | tee "$artifacts/cargo-test.log"; then :; else
  failed_steps+=("cargo test")
fi

banner "vitest: Node"
if npx --no-install vitest run --project node \
  --reporter=default --reporter=json --outputFile.json="$artifacts/vitest-node.json"; then :; else
  failed_steps+=("vitest node")
fi

banner "vitest: browser (Debian chromium; firefox-esr and WebKitGTK in engines.test.ts)"
# setup.sh --browser has run, so a missing browser is a failure here rather than a skip.
if WEBMPC_REQUIRE_BROWSER=1 npx --no-install vitest run --project browser \
  --reporter=default --reporter=json --outputFile.json="$artifacts/vitest-browser.json"; then :; else
  failed_steps+=("vitest browser")
fi

banner "summary"
node - "$artifacts" <<'EOF' || failed_steps+=("summary")
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const dir = process.argv[2];
const rows = [];
// Named at the very end, so that the tail of a long log (all a CI page may show) says what failed.
const failures = [];

const cargoLog = join(dir, 'cargo-test.log');
if (existsSync(cargoLog)) {
  const c = { passed: 0, failed: 0, skipped: 0 };
  for (const m of readFileSync(cargoLog, 'utf8').matchAll(/test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/g)) {
    c.passed += +m[1];
    c.failed += +m[2];
    c.skipped += +m[3];
  }
  rows.push(['cargo test', c]);
  for (const m of readFileSync(cargoLog, 'utf8').matchAll(/^test (\S+) \.\.\. FAILED$/gm)) failures.push(`cargo test: ${m[1]}`);
}
for (const name of ['node', 'browser']) {
  const f = join(dir, `vitest-${name}.json`);
  if (!existsSync(f)) continue;
  const r = JSON.parse(readFileSync(f, 'utf8'));
  // A file whose setup (beforeAll, an import) failed has no failed test, only skipped ones;
  // count it as a failure so the total never reads clean when vitest did not.
  const brokenFiles = (r.testResults ?? []).filter(
    (t) => t.status === 'failed' && !t.assertionResults.some((a) => a.status === 'failed'),
  ).length;
  for (const file of r.testResults ?? []) {
    const where = file.name.replace(/^.*?\/tests\//, 'tests/');
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    for (const a of failed) {
      const why = String(a.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300);
      failures.push(`vitest ${name}: ${where} > ${a.fullName} (${why})`);
    }
    if (file.status === 'failed' && failed.length === 0) {
      failures.push(`vitest ${name}: ${where} (the file failed before its tests: ${String(file.message ?? '').split('\n')[0].slice(0, 300)})`);
    }
  }
  rows.push([`vitest ${name}`, {
    passed: r.numPassedTests,
    failed: r.numFailedTests + brokenFiles,
    skipped: r.numPendingTests + r.numTodoTests,
  }]);
}
const total = { passed: 0, failed: 0, skipped: 0 };
for (const [name, c] of rows) {
  console.log(`${name.padEnd(16)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  for (const k of Object.keys(total)) total[k] += c[k];
}
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
for (const f of failures) console.log(`failed: ${f}`);
EOF

if [ "${#failed_steps[@]}" -gt 0 ]; then
  echo "FAILED: ${failed_steps[*]}" >&2
  exit 1
fi
