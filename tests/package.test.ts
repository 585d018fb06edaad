// The package as npm would publish it: `npm pack`, unpacked into a scratch node_modules, imported
// by name from a plain Node process (no Vite, no test runner in between).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, packInto } from './helpers.js';

let scratch: string;
let files: string[];
let app: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'webmpc-pack-'));
  ({ files, app } = packInto(scratch));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module', private: true }));
}, 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('published package', () => {
  it('ships the entry, its types and the Wasm module, and not the test-only baseline', () => {
    for (const f of [
      'package.json',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/wasm-gen/webmpc.js',
      'dist/wasm-gen/webmpc.d.ts',
      'dist/wasm-gen/webmpc_bg.wasm',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /baseline/.test(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith('ts/') || f.startsWith('tests/') || f.startsWith('wasm/'))).toEqual([]);
  });

  it('loads by name in plain Node and computes the FIPS-197 vector', () => {
    writeFileSync(
      join(app, 'main.js'),
      `import { init, aesEncrypt, KernelError, circuit, createMemoryTransports, session } from 'webmpc';
await init();
const h = (s) => Uint8Array.from(Buffer.from(s, 'hex'));
const ct = aesEncrypt(h('000102030405060708090a0b0c0d0e0f'), h('00112233445566778899aabbccddeeff'));
let code;
try { aesEncrypt(new Uint8Array(3), new Uint8Array(16)); } catch (e) { code = e instanceof KernelError && e.code; }
// A two-party run through the session API; closing the sessions lets the process exit.
const b = new circuit.CircuitBuilder();
b.output(b.input(1, 8).gt(b.input(0, 8)).toUInt());
const transports = createMemoryTransports(2);
const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2 })));
const outs = await Promise.all(sessions.map((s, party) => s.run(b.build(), { inputs: [Uint8Array.of(party === 0 ? 10 : 99)] })));
await Promise.all(sessions.map((s) => s.close()));
console.log(JSON.stringify({ ct: Buffer.from(ct).toString('hex'), code, gt: outs.map((o) => o[0][0]) }));
`,
    );
    const out = execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ ct: '69c4e0d86a7b0430d8cdb78070b4c55a', code: 'WRONG_SIZE', gt: [1, 1] });
    expect(readdirSync(join(app, 'node_modules', 'webmpc', 'dist'))).toContain('index.js');
  });

  // Apps type-check their dependencies' declarations unless they set skipLibCheck. Two common
  // setups: a browser app (DOM lib, no Node types) and a Node app (Node types, no DOM lib).
  it.each([
    ['browser app', { lib: ['es2022', 'dom'], types: [] }],
    ['Node app', { lib: ['es2022'], types: ['node'] }],
  ] as const)('its declarations type-check in a %s with skipLibCheck off', (_name, opts) => {
    const dir = join(app, `tc-${opts.types.length}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          ...opts,
        },
        include: ['main.ts'],
      }),
    );
    writeFileSync(
      join(dir, 'main.ts'),
      `import { init, aesEncrypt, hashTccrCounter, KernelError, Prg, createMemoryTransports, session } from 'webmpc';
import type { WasmSource, KernelErrorCode, Progress, RunOptions } from 'webmpc';
await init();
await init({ wasm: new Uint8Array(8) });
const src: WasmSource = 'https://example.invalid/webmpc_bg.wasm';
void src;
const ct: Uint8Array = aesEncrypt(new Uint8Array(16), new Uint8Array(16));
hashTccrCounter(ct, new Uint8Array(16));
const prg = new Prg(new Uint8Array(16));
prg.fillBytes(8);
prg.free();
try {
  aesEncrypt(new Uint8Array(1), ct);
} catch (e) {
  if (e instanceof KernelError) {
    const code: KernelErrorCode = e.code;
    void code;
  }
}
// @ts-expect-error blocks must be bytes
aesEncrypt(new Uint8Array(16), 'not bytes');
// The session API: protocol-specific options are typed by protocol.
const [transport] = createMemoryTransports(2);
const s = await session({ transport: transport!, party: 0, parties: 2 });
const out: (Uint8Array | undefined)[] = await s.run(new Uint8Array(0), {
  inputs: [],
  garbler: 1,
  onProgress: (p: Progress) => void [p.phase, p.done, p.total, p.bytesSent],
});
void out;
const plainOptions: RunOptions<'plain'> = { inputs: [], protocol: 'plain' };
await s.run('', plainOptions);
// @ts-expect-error plain has no garbler
await s.run('', { inputs: [], protocol: 'plain', garbler: 1 });
// @ts-expect-error no such protocol
await s.run('', { inputs: [], protocol: 'nope' });
await s.preprocess('yao2pc', { garbler: 0 });
await s[Symbol.asyncDispose]();
await s.close();
`,
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe('');
  });
});
