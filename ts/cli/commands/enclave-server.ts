/** `webmpc enclave-server`: hosts the teleport enclave program beside an evaluator. */
import { integerOption, parseCommand } from '../args.js';
import { UsageError } from '../errors.js';
import { untilStopped } from '../signals.js';


const USAGE =
  'usage: webmpc enclave-server --backend simulation|openenclave [--port N] [--host H] [--program PATH]\n' +
  '                             [--enclave-image PATH] [--evidence-key FILE] [--allow-origin ORIGIN]...\n' +
  '                             [--max-sessions N] [--max-sessions-per-client N] [--max-wires N]\n' +
  '                             [--max-gates N] [--max-rots N] [--max-jobs N] [--max-memory BYTES]\n' +
  '       webmpc enclave-server --backend simulation --print-measurement [--program PATH]\n' +
  '  Hosts the teleport enclave program for evaluators (teleport-yao, teleported OT): one enclave\n' +
  '  program per WebSocket connection, one attested session for all its jobs.\n' +
  '  --backend simulation   the native program with a software evidence key: NO HARDWARE PROTECTION\n' +
  '                         (this host can read every seed); clients must set allowSimulatedEnclave\n' +
  '                         (`webmpc eval|party --allow-simulated-enclave`)\n' +
  '  --backend openenclave  webmpc_host (--program) and a signed enclave image (--enclave-image),\n' +
  '                         built with the Open Enclave SDK on an SGX machine\n' +
  '  --port N               default 8790 (0: any free port); --host default 127.0.0.1\n' +
  '  --program PATH         the enclave program (simulation default: the one shipped with the package)\n' +
  '  --evidence-key FILE    simulation: a 64-hex-digit Ed25519 seed, so clients can pin the signer\n' +
  '  --allow-origin ORIGIN  a browser origin allowed to connect (repeatable; * for any). Default none:\n' +
  '                         a request with an Origin header (any web page) is refused\n' +
  '  --max-sessions N       sessions at most (16); --max-sessions-per-client N (4, by remote address)\n' +
  '  --max-wires, --max-gates, --max-rots N   per job; --max-jobs N per session;\n' +
  '  --max-memory BYTES     memory one job may declare (default 268435456: 256 MiB)\n' +
  '  --print-measurement    print the measurement clients pin (hex SHA-256 of the program) and exit\n';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(
    args,
    {
      backend: { type: 'string' },
      port: { type: 'string', default: '8790' },
      host: { type: 'string', default: '127.0.0.1' },
      program: { type: 'string' },
      'enclave-image': { type: 'string' },
      'evidence-key': { type: 'string' },
      'max-wires': { type: 'string' },
      'max-gates': { type: 'string' },
      'max-rots': { type: 'string' },
      'max-jobs': { type: 'string' },
      'max-memory': { type: 'string' },
      'max-sessions': { type: 'string' },
      'max-sessions-per-client': { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'print-measurement': { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values } = parsed;
  const backend = values.backend;
  if (backend !== 'simulation' && backend !== 'openenclave') throw new UsageError('--backend must be simulation or openenclave');
  const port = integerOption(values.port, '--port', 0, 65_535)!;
  const limits = {
    maxWires: integerOption(values['max-wires'], '--max-wires', 1, 2 ** 32 - 1),
    maxGates: integerOption(values['max-gates'], '--max-gates', 1, Number.MAX_SAFE_INTEGER),
    maxRots: integerOption(values['max-rots'], '--max-rots', 1, Number.MAX_SAFE_INTEGER),
    maxJobs: integerOption(values['max-jobs'], '--max-jobs', 1, 2 ** 20),
    maxMemory: integerOption(values['max-memory'], '--max-memory', 1, Number.MAX_SAFE_INTEGER),
    maxSessions: integerOption(values['max-sessions'], '--max-sessions', 1, 10_000),
    maxSessionsPerClient: integerOption(values['max-sessions-per-client'], '--max-sessions-per-client', 1, 10_000),
  };
  const server = await import('../../enclave/server.js');
  if (values['print-measurement']) {
    if (backend !== 'simulation') throw new UsageError('--print-measurement is for the simulation backend (Open Enclave: oesign dump -e IMAGE)');
    const program = server.findEnclaveProgram(values.program);
    const { execFileSync } = await import('node:child_process');
    process.stdout.write(`${execFileSync(program, ['--print-measurement'], { encoding: 'utf8' }).trim()}\n`);
    return 0;
  }
  const s = await server.startEnclaveServer({
    backend,
    port,
    host: values.host,
    ...(values.program !== undefined ? { program: values.program } : {}),
    ...(values['enclave-image'] !== undefined ? { enclaveImage: values['enclave-image'] } : {}),
    ...(values['evidence-key'] !== undefined ? { evidenceKey: values['evidence-key'] } : {}),
    ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    ...(values['allow-origin'] !== undefined ? { allowedOrigins: values['allow-origin'] } : {}),
  });
  const label = s.simulated ? ' [SIMULATION BACKEND: NOT AN ENCLAVE, NO HARDWARE PROTECTION]' : ' [Open Enclave]';
  process.stdout.write(`webmpc enclave-server: listening on ${s.url}${label}\n`);
  if (s.measurement) process.stdout.write(`measurement ${s.measurement}\n`);
  if (s.signer) process.stdout.write(`evidence signer ${s.signer}\n`);
  await untilStopped();
  await s.close();
  return 0;
}
