// The package as npm would publish it: `npm pack`, installed with `npm install` into an empty
// project, used from plain Node processes (no Vite, no test runner in between): its contents,
// its size, the README's snippets and the Node example, the command line through npx, missing
// optional dependencies, and its declarations under the module resolutions apps use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from './helpers.js';
import { installInto, pack, type Packed } from './package-pack.js';

/**
 * The Wasm budget, gzipped, for each module in the tarball (issue 14: ≤ 400 KB as protocols
 * land): an app downloads the main module and only the protocol modules it uses.
 */
const WASM_GZIP_BUDGET = 400 * 1024;

/** Every Wasm module the package ships: the main one and the per-protocol ones loaded on first use. */
const WASM_MODULES = ['webmpc', 'webmpc_mascot', 'webmpc_teleport'];

let scratch: string;
let packed: Packed;
let app: string;
const installed = () => join(app, 'node_modules', 'webmpc');

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'webmpc-pack-'));
  packed = pack(scratch);
  app = join(scratch, 'app');
  installInto(app, packed.tarball);
}, 240_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function node(args: string[], cwd = app): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The custom sections of a Wasm module, by name. */
function customSections(wasm: Uint8Array): string[] {
  const names: string[] = [];
  let p = 8;
  const leb = () => {
    let r = 0;
    let shift = 0;
    for (;;) {
      const b = wasm[p++]!;
      r += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(b & 0x80)) return r;
    }
  };
  while (p < wasm.length) {
    const id = wasm[p++]!;
    const size = leb();
    const end = p + size;
    if (id === 0) {
      const n = leb();
      names.push(new TextDecoder().decode(wasm.subarray(p, p + n)));
    }
    p = end;
  }
  return names;
}

/** The js code blocks of a Markdown file, in order. */
function jsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('the tarball', () => {
  it('ships the entry points, types, Wasm, bin, the users README, changelog and both licences, and nothing else', () => {
    for (const f of [
      'package.json',
      'README.md',
      'CHANGELOG.md',
      'LICENSE-MIT',
      'LICENSE-APACHE',
      'bin/webmpc.js',
      'dist/cli.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/net/index.js',
      'dist/net/node.js',
      'dist/circuit/index.js',
      'dist/secure/index.js',
      ...WASM_MODULES.flatMap((m) => [`dist/wasm-gen/${m}.js`, `dist/wasm-gen/${m}_bg.wasm`]),
    ]) {
      expect(packed.files).toContain(f);
    }
    expect(packed.files.filter((f) => /baseline/.test(f))).toEqual([]);
    expect(packed.files.filter((f) => !/^(dist|bin)\//.test(f)).sort()).toEqual(
      ['CHANGELOG.md', 'LICENSE-APACHE', 'LICENSE-MIT', 'README.md', 'package.json'].sort(),
    );
    // The README in the package is the users' one; the repository keeps the developers' one.
    const shipped = readFileSync(join(installed(), 'README.md'), 'utf8');
    expect(shipped).toBe(readFileSync(join(ROOT, 'PACKAGE-README.md'), 'utf8'));
    expect(shipped).toContain('npm install webmpc');
    expect(readFileSync(join(installed(), 'LICENSE-MIT'), 'utf8')).toContain('MIT License');
    expect(readFileSync(join(installed(), 'LICENSE-APACHE'), 'utf8')).toContain('Apache License');
    expect(JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8')).license).toBe('MIT OR Apache-2.0');
  });

  it('each Wasm module is within the size budget and carries no name section', () => {
    // Every .wasm in the tarball is one of the known modules (a new one must be budgeted here).
    expect(packed.files.filter((f) => f.endsWith('.wasm')).sort()).toEqual(WASM_MODULES.map((m) => `dist/wasm-gen/${m}_bg.wasm`).sort());
    const sizes = WASM_MODULES.map((m) => {
      const wasm = new Uint8Array(readFileSync(join(installed(), `dist/wasm-gen/${m}_bg.wasm`)));
      return { m, wasm, raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
    });
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    console.log(
      [
        `package size: tarball ${kb(packed.size)}; Wasm modules (gzip -9, budget ${WASM_GZIP_BUDGET / 1024} KB each):`,
        ...sizes.map(({ m, raw, gzip }) => `  ${m}_bg.wasm ${kb(raw)}, ${kb(gzip)} gzipped`),
        `  total ${kb(sizes.reduce((a, s) => a + s.raw, 0))}, ${kb(sizes.reduce((a, s) => a + s.gzip, 0))} gzipped`,
      ].join('\n'),
    );
    for (const { m, wasm, gzip } of sizes) {
      expect(gzip, `${m}_bg.wasm gzipped`).toBeLessThanOrEqual(WASM_GZIP_BUDGET);
      expect(customSections(wasm), m).not.toContain('name');
      expect(customSections(wasm), m).not.toContain('producers');
    }
  });

  it('installs without the optional Node transports (ws, node-datachannel), but with libsodium', () => {
    const modules = readdirSync(join(app, 'node_modules'));
    expect(modules).toContain('webmpc');
    expect(modules).toContain('libsodium-wrappers');
    expect(modules).not.toContain('ws');
    expect(modules).not.toContain('node-datachannel');
    expect(modules).not.toContain('@node-datachannel');
  });

  it('npm pack refuses to pack a checkout it cannot build, and leaves its README alone', () => {
    // A clean clone's view: package.json and the scripts, no dist/, no Rust workspace.
    const clone = join(scratch, 'clone');
    mkdirSync(join(clone, 'scripts'), { recursive: true });
    for (const f of ['package.json', 'README.md', 'PACKAGE-README.md', 'scripts/pack.mjs', 'scripts/build.mjs']) {
      copyFileSync(join(ROOT, f), join(clone, f));
    }
    const r = spawnSync('npm', ['pack', '--pack-destination', scratch], { cwd: clone, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/must be built before it is packed/);
    expect(readdirSync(clone).filter((f) => f.endsWith('.tgz') || f.startsWith('.README') || f === '.pack-lock')).toEqual([]);
    expect(readFileSync(join(clone, 'README.md'), 'utf8')).toBe(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  });
});

describe('used from Node', () => {
  it('the Node example runs and exits by itself, with the answer both ways round', () => {
    copyFileSync(join(ROOT, 'examples/node/millionaires.mjs'), join(app, 'millionaires.mjs'));
    const richer = node(['millionaires.mjs', '1000000', '750000']);
    expect(richer.stderr).toBe('');
    expect(richer.stdout).toBe('Alice is richer: true (party 0 learns), true (party 1 learns)\n');
    expect(node(['millionaires.mjs', '5', '9']).stdout).toBe('Alice is richer: false (party 0 learns), false (party 1 learns)\n');
  });

  it("the README's in-process snippet is the example's code and runs as shown", () => {
    const readme = readFileSync(join(installed(), 'README.md'), 'utf8');
    const [snippet] = jsBlocks(readme);
    writeFileSync(join(app, 'readme-snippet.mjs'), snippet!);
    const r = node(['readme-snippet.mjs']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('Alice is richer: true (party 0 learns), true (party 1 learns)');
    expect(readme).toContain(`It prints \`${r.stdout.trim()}\``);
  });

  it('the kernels and typed errors work by name (FIPS-197)', () => {
    writeFileSync(
      join(app, 'kernels.mjs'),
      `import { init, aesEncrypt, KernelError } from 'webmpc';
await init();
const h = (s) => Uint8Array.from(Buffer.from(s, 'hex'));
const ct = aesEncrypt(h('000102030405060708090a0b0c0d0e0f'), h('00112233445566778899aabbccddeeff'));
let code;
try { aesEncrypt(new Uint8Array(3), new Uint8Array(16)); } catch (e) { code = e instanceof KernelError && e.code; }
console.log(JSON.stringify({ ct: Buffer.from(ct).toString('hex'), code }));
`,
    );
    expect(JSON.parse(node(['kernels.mjs']).stdout)).toEqual({ ct: '69c4e0d86a7b0430d8cdb78070b4c55a', code: 'WRONG_SIZE' });
  });

  it('a Node transport without its optional package fails with MISSING_DEPENDENCY naming it', () => {
    writeFileSync(
      join(app, 'missing.mjs'),
      `import { connectNodeMesh, startSignalingServer, connectWebSocketMesh } from 'webmpc/net/node';
const out = [];
for (const f of [
  () => connectNodeMesh({ signalingUrl: 'ws://127.0.0.1:9', room: 'r', party: 0, parties: 2 }),
  () => startSignalingServer({ port: 0 }),
  () => connectWebSocketMesh({ party: 0, parties: 2, session: 's', peers: [undefined, 'ws://127.0.0.1:9'] }),
]) {
  try { await f(); out.push('no error'); } catch (e) { out.push([e.code, e.message]); }
}
console.log(JSON.stringify(out));
`,
    );
    const r = node(['missing.mjs']);
    const [mesh, server, websocket] = JSON.parse(r.stdout) as [string, string][];
    expect(mesh![0]).toBe('MISSING_DEPENDENCY');
    expect(mesh![1]).toContain('npm install node-datachannel');
    expect(server![0]).toBe('MISSING_DEPENDENCY');
    expect(server![1]).toContain('npm install ws');
    expect(websocket![0]).toBe('MISSING_DEPENDENCY');
    expect(websocket![1]).toContain("'ws'");
  });
});

describe('the webmpc command', () => {
  // In a checkout, npx links the package into its cache first: a cache of our own, so the test
  // sees what a first-time user sees and leaves nothing behind.
  const npx = (args: string[], cwd = app) =>
    spawnSync('npx', ['--no-install', 'webmpc', ...args], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, npm_config_cache: join(scratch, 'npm-cache') },
    });

  beforeAll(() => {
    const r = npx(['circuit', 'compare32', 'compare.txt']);
    if (r.status !== 0) throw new Error(r.stderr);
  });

  it('npx webmpc --version prints the package version, in a project and in this checkout', () => {
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    expect(npx(['--version']).stdout).toBe(`${version}\n`);
    expect(npx(['--version'], ROOT).stdout).toBe(`${version}\n`);
  });

  it("runs the README's command-line example as shown (a ready-made circuit, then eval)", () => {
    const readme = readFileSync(join(installed(), 'README.md'), 'utf8');
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('webmpc eval'))!;
    const lines = block.split('\n');
    const expected = lines.find((l) => l.startsWith('# -> '))!.slice(5).split(/\s/)[0];
    const commands = lines.filter((l) => l.startsWith('npx webmpc'));
    expect(commands.length).toBe(2);
    let last = '';
    for (const command of commands) {
      const args = command.replace(/\s+#.*$/, '').split(/\s+/).slice(2);
      const r = npx(args);
      expect(r.status, r.stderr).toBe(0);
      last = r.stdout;
    }
    expect(last).toBe(`${expected}\n`);
    expect(expected).toBe('01'); // 0xf4240 = 1000000 > 0xb71b0 = 750000
  });

  it('help explains each option with its default; signal names its port', () => {
    const signal = npx(['signal', '--help']).stdout;
    expect(signal).toMatch(/--port N\s+TCP port.*default 8787/);
    for (const option of ['--host', '--relay', '--ice', '--ice-username']) expect(signal).toContain(option);
    const party = npx(['party', '--help']).stdout;
    for (const option of ['--circuit', '--party', '--input', '--owners', '--protocol', '--signal', '--room', '--transport', '--listen', '--peer ', '--identity', '--peer-key', '--confirm', '--insecure', '--timeout', '--peer-timeout', '--json']) {
      // Every option is on a line of its own that says what it does.
      expect(party).toMatch(new RegExp(`^\\s+${option.trim()}\\b.*\\S.*$`, 'm'));
    }
    expect(party).toMatch(/--timeout MS.*\n.*default 30000/);
    expect(npx(['circuit', '--help']).stdout).toMatch(/compare32/);
  });

  it("input errors number the circuit's inputs (party 1 owns input 2), never this party's own list", () => {
    const r = npx(['party', '--circuit', 'compare.txt', '--party', '1', '--input', '1ffffffff', '--room', 'r', '--signal', 'ws://127.0.0.1:9', '--insecure']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("input value 2) does not fit in the circuit's 32 bits");
    const e = npx(['eval', '--circuit', 'compare.txt', '--input', '1=1', '--input', '2=100000000']);
    expect(e.status).toBe(2);
    expect(e.stderr).toContain("input 2 does not fit in the circuit's 32 bits");
  });

  it('party over WebRTC without node-datachannel installed says which package to install', () => {
    const r = npx(['party', '--circuit', 'compare.txt', '--party', '0', '--input', '1', '--room', 'r', '--signal', 'ws://127.0.0.1:9', '--insecure']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('npm install node-datachannel');
  });

  it('the command in a checkout that is not built yet says to build, instead of "not found"', () => {
    const clone = join(scratch, 'unbuilt');
    mkdirSync(join(clone, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/webmpc.js'), join(clone, 'bin/webmpc.js'));
    writeFileSync(join(clone, 'package.json'), JSON.stringify({ name: 'webmpc', type: 'module', bin: { webmpc: 'bin/webmpc.js' } }));
    const r = npx(['--version'], clone);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('run `npm run build` first');
    expect(existsSync(join(clone, 'dist'))).toBe(false);
  });
});

describe('its declarations', () => {
  // Apps type-check their dependencies' declarations unless they set skipLibCheck. The module
  // resolutions apps use (node16 for Node, bundler for Vite and friends), each with the lib and
  // types of a browser app and of a Node app.
  const SOURCE = `import { init, aesEncrypt, KernelError, createMemoryTransports, session, encodeUint, decodeUint, circuit } from 'webmpc';
import type { WasmSource, KernelErrorCode, Progress, RunOptions, WebmpcErrorCode } from 'webmpc';
import { connectMesh, type Transport } from 'webmpc/net';
import { CircuitBuilder, aes128Circuit } from 'webmpc/circuit';
import { generateIdentity, publicKeyToHex, secureTransport } from 'webmpc/secure';
await init();
await init({ wasm: new Uint8Array(8) });
const src: WasmSource = 'https://example.invalid/webmpc_bg.wasm';
void src;
const ct: Uint8Array = aesEncrypt(new Uint8Array(16), new Uint8Array(16));
try {
  aesEncrypt(new Uint8Array(1), ct);
} catch (e) {
  if (e instanceof KernelError) {
    const code: KernelErrorCode = e.code;
    void code;
  }
}
const missing: WebmpcErrorCode = 'MISSING_DEPENDENCY';
void missing;
// @ts-expect-error blocks must be bytes
aesEncrypt(new Uint8Array(16), 'not bytes');
const b = new CircuitBuilder();
b.output(b.input(0, 8).gt(b.input(1, 8)));
// @ts-expect-error the builder's gate-level helpers are internal (stripped from the declarations)
b.xorRef(0, 1);
void new circuit.CircuitBuilder();
void aes128Circuit;
const [transport] = createMemoryTransports(2);
const s = await session({ transport: transport!, party: 0, parties: 2 });
const out: (Uint8Array | undefined)[] = await s.run(b.build(), {
  inputs: [encodeUint(7n, 8)],
  garbler: 1,
  onProgress: (p: Progress) => void [p.phase, p.done, p.total, p.bytesSent],
});
const v: bigint = decodeUint(out[0], 1);
void v;
const plainOptions: RunOptions<'plain'> = { inputs: [], protocol: 'plain' };
await s.run('', plainOptions);
// @ts-expect-error plain has no garbler
await s.run('', { inputs: [], protocol: 'plain', garbler: 1 });
// @ts-expect-error no such protocol
await s.run('', { inputs: [], protocol: 'nope' });
await s.preprocess('yao2pc', { garbler: 0 });
await s[Symbol.asyncDispose]();
await s.close();
const me = await generateIdentity();
const hex: string = publicKeyToHex(me.publicKey);
void hex;
const mesh: Promise<Transport> = connectMesh({ signalingUrl: 'ws://x', room: 'r', party: 0, parties: 2 });
void mesh.then((t) => secureTransport(t, { identity: me, trust: 'tofu', sessionId: 'r' }));
`;
  const NODE_ONLY = `import { connectNodeMesh, startSignalingServer } from 'webmpc/net/node';
void connectNodeMesh;
void startSignalingServer;
`;
  const cases = [
    ['node16', 'browser app', { module: 'node16', moduleResolution: 'node16', lib: ['es2022', 'dom'], types: [] }],
    ['node16', 'Node app', { module: 'node16', moduleResolution: 'node16', lib: ['es2022'], types: ['node'] }],
    ['bundler', 'browser app', { module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], types: [] }],
    ['bundler', 'Node app', { module: 'esnext', moduleResolution: 'bundler', lib: ['es2022'], types: ['node'] }],
  ] as const;
  it.each(cases)('type-check with moduleResolution %s in a %s, skipLibCheck off', (resolution, kind, opts) => {
    const dir = join(app, `tc-${resolution}-${opts.types.length}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          ...opts,
        },
        include: ['*.ts'],
      }),
    );
    // A package.json with "type": "module" beside the sources, as the README asks of apps.
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(join(dir, 'main.ts'), SOURCE);
    if (kind === 'Node app') writeFileSync(join(dir, 'node.ts'), NODE_ONLY);
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
