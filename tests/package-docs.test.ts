// `npm run docs`: the API reference generated from the doc comments by TypeDoc (run here into a
// scratch folder). It must build without errors and have a page for each entry point and for the
// main functions a user looks up; items without a doc comment are counted and printed (TypeDoc's
// notDocumented validation), and none may be in the modules listed in DOCUMENTED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

const TYPEDOC = join(ROOT, 'scripts/docs/node_modules/typedoc/bin/typedoc');
/** Modules whose every exported item must have a doc comment (the rest: see the printed count). */
const DOCUMENTED = ['ts/encoding.ts', 'ts/net/optional.ts', 'ts/net/node.ts', 'ts/secure/identity.ts'];

let out: string;
let log: string;
let status: number | null;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'webmpc-docs-'));
  const r = spawnSync(process.execPath, [TYPEDOC, '--options', join(ROOT, 'typedoc.json'), '--out', out, '--logLevel', 'Warn'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    timeout: 120_000,
  });
  status = r.status;
  log = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, '');
}, 150_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('npm run docs (TypeDoc)', () => {
  it('builds without errors, with a page per entry point and for the functions users look up first', () => {
    expect(status, log).toBe(0);
    expect(log).not.toMatch(/\[error\]/);
    for (const page of [
      'index.html',
      'modules/index.html',
      'modules/net.html',
      'modules/net_node.html',
      'modules/circuit.html',
      'modules/secure.html',
      'functions/index.session.html',
      'functions/index.encodeUint.html',
      'functions/index.init.html',
      'classes/index.Session.html',
      'functions/net_node.connectNodeMesh.html',
      'functions/secure.secureTransport.html',
      'classes/circuit.CircuitBuilder.html',
    ]) {
      expect(existsSync(join(out, page)), page).toBe(true);
    }
    // The front page is the users' README.
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('Two parties in one process');
    // Internal members are not documented as API.
    expect(readFileSync(join(out, 'classes/circuit.CircuitBuilder.html'), 'utf8')).not.toContain('xorRef');
  });

  it('every exported item of the listed modules has a doc comment; the others are counted', () => {
    const undocumented = log.split('\n').filter((l) => l.includes('does not have any documentation'));
    console.log(`API reference: ${undocumented.length} exported items without a doc comment`);
    for (const module of DOCUMENTED) {
      expect(undocumented.filter((l) => l.includes(`webmpc/${module}`))).toEqual([]);
    }
  });
});
