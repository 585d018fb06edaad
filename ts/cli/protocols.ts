/**
 * The protocols as the command line sees them. What a protocol is — its name, how many parties
 * it runs with, whether it computes on circuits or programs, which run options it takes — comes
 * from the protocol registry (`ts/protocols/index.ts`), so a protocol added there runs from
 * `eval` and `party` without a branch here. What is the command line's own lives in two small
 * tables:
 *
 * - {@link ROLE_FLAGS}: how the CLI spells each run option a module may list in `roleOptions`
 *   (`garbler` is `--garbler P`; `enclave` is `--enclave URL` with the pinned measurements).
 *   A protocol takes exactly the flags of the role options its module lists; a run option with
 *   no entry here (mascot's `field`, a check the program answers anyway) is not offered.
 * - {@link ADAPTERS}: what the CLI prints differently per protocol.
 */
import { WebmpcError } from '../errors.js';
import { protocolModule, protocols, type Protocol, type ProtocolModule } from '../protocols/index.js';
import { integerOption, partyIndex } from './args.js';
import { UsageError } from './errors.js';

export type { Protocol, ProtocolModule };

/** Most parties `--parties` names (the modules allow more: plain 65,535). */
export const MAX_CLI_PARTIES = 32;

/** The protocol the command line runs without `--protocol`. */
export const DEFAULT_PROTOCOL: Protocol = 'yao2pc';

/** What the CLI does differently for one protocol, beyond what the registry says. */
interface Adapter {
  /** A few words for the `--protocol` list in `--help`. */
  readonly about: string;
  /**
   * `eval --json` reports the number of parties: for the protocols where it varies from run to
   * run (the two-party ones' output has stayed as scripts know it).
   */
  readonly jsonParties?: true;
}

/** Per protocol: its line in `--help`, and its quirks of output. */
const ADAPTERS: { readonly [P in Protocol]?: Adapter } = {
  yao2pc: { about: 'garbled circuits: private against parties that follow the protocol' },
  authgc: {
    about: 'authenticated garbling: private and correct against any N-1 parties that deviate; a cheater can only make the others abort',
    jsonParties: true,
  },
  plain: { about: 'no privacy at all: every party sees every input (debugging)' },
  mascot: { about: 'arithmetic programs (--program), malicious-secure with abort', jsonParties: true },
  'teleport-yao': {
    about: 'garbling teleported through an enclave beside the evaluator: the garbler sends only a seed and its labels (--mode, --enclave)',
  },
};

/** The values of the parsed role flags (a flag not given is undefined). */
export type FlagValues = { readonly [flag: string]: string | boolean | string[] | undefined };

/** What a role flag's reader knows of the run. */
export interface FlagContext {
  readonly protocol: string;
  readonly parties: number;
}

/** The command-line form of one run option (`module.roleOptions`). */
interface RoleFlag {
  /** The `util.parseArgs` options it reads (no defaults: absent means the module's default). */
  readonly options: Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly multiple?: true }>>;
  /** Its lines in `--help`. */
  readonly help: string;
  /** The run option's value from the flags, or undefined for the module's default. */
  read(values: FlagValues, ctx: FlagContext): unknown;
  /**
   * Phrases of the module's error messages that name it in the SDK's words, and the flags to
   * name instead (exact phrases: the flags' own forms are checked here, in their words).
   */
  readonly terms?: readonly (readonly [string, string])[];
  /** A warning `party` prints before connecting, about what this value accepts. */
  warning?(value: unknown): string | undefined;
}

const hexPins = (list: unknown, flag: string): string[] =>
  ((list as string[] | undefined) ?? []).map((h) => {
    if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new UsageError(`${flag} must be 64 hex digits (32 bytes)`);
    return h.toLowerCase();
  });

/** The run options the command line offers, by the name modules list in `roleOptions`. */
const ROLE_FLAGS: Readonly<Record<string, RoleFlag>> = {
  garbler: {
    options: { garbler: { type: 'string' } },
    help: '  --garbler P      the garbling party, 0 or 1 (default 0); the other evaluates\n',
    read: (v, ctx) => (v.garbler === undefined ? undefined : partyIndex(v.garbler as string, '--garbler', ctx.parties)),
  },
  evaluator: {
    options: { evaluator: { type: 'string' } },
    help: '  --evaluator P    the evaluating party (default 0); all parties get every output\n',
    read: (v, ctx) => (v.evaluator === undefined ? undefined : partyIndex(v.evaluator as string, '--evaluator', ctx.parties)),
  },
  rho: {
    options: { rho: { type: 'string' } },
    help: '  --rho N          statistical security parameter, 40 to 128 (default 40)\n',
    read: (v) => integerOption(v.rho as string | undefined, '--rho', 40, 128),
  },
  mode: {
    options: { mode: { type: 'string' } },
    help:
      '  --mode M         semi-honest (every entity follows the protocol) or malicious (any one of\n' +
      '                   garbler, evaluator and enclave may deviate: abort); required, both the same\n',
    read: (v) => {
      if (v.mode === undefined) return undefined;
      if (v.mode !== 'semi-honest' && v.mode !== 'malicious') throw new UsageError('--mode must be semi-honest or malicious');
      return v.mode;
    },
    terms: [["mode: 'semi-honest' or 'malicious'", '--mode semi-honest or --mode malicious']],
  },
  enclave: {
    options: {
      enclave: { type: 'string' },
      measurement: { type: 'string', multiple: true },
      'simulated-measurement': { type: 'string', multiple: true },
      'simulation-signer': { type: 'string', multiple: true },
      'allow-simulated-enclave': { type: 'boolean' },
      'allow-plaintext-websocket': { type: 'boolean' },
    },
    help:
      '  --enclave URL    the enclave-server (`webmpc enclave-server`) beside the evaluator, e.g.\n' +
      '                   ws://127.0.0.1:8790 (wss:// off this machine); the evaluator reaches it,\n' +
      '                   the garbler never does (it needs no --enclave)\n' +
      '  --measurement HEX  an Open Enclave MRENCLAVE to accept (`oesign dump`; repeatable)\n' +
      '  --simulated-measurement HEX  the simulation program to accept\n' +
      '                   (`webmpc enclave-server --print-measurement`; repeatable); with:\n' +
      '  --allow-simulated-enclave  accept the simulation backend, which has NO HARDWARE PROTECTION:\n' +
      "                   the server's host can read the garbler's seed (hence its input) and the\n" +
      "                   evaluator's share. Both parties must allow it. Development only.\n" +
      '  --simulation-signer HEX  the simulation evidence key to accept (the server\'s\n' +
      '                   --evidence-key; repeatable; default any)\n' +
      '  --allow-plaintext-websocket  accept a ws:// --enclave URL to another machine (the secrets\n' +
      '                   are sealed either way; the network sees the circuit and can cut the run)\n',
    async read(v, ctx) {
      // The pins are checked for their form here, with the flags' names; the module checks
      // the rest (the URL, at the evaluator) when the roles are settled.
      const measurements = hexPins(v.measurement, '--measurement');
      const simulated = hexPins(v['simulated-measurement'], '--simulated-measurement');
      const signers = hexPins(v['simulation-signer'], '--simulation-signer');
      const allowSimulated = v['allow-simulated-enclave'] === true;
      if (measurements.length + simulated.length === 0) {
        throw new UsageError(
          `${ctx.protocol} needs the enclave's measurement pinned: --measurement HEX (an Open Enclave MRENCLAVE), or ` +
            '--simulated-measurement HEX (`webmpc enclave-server --print-measurement`) with --allow-simulated-enclave',
        );
      }
      if (allowSimulated && simulated.length === 0) {
        throw new UsageError('--allow-simulated-enclave needs the simulation program pinned: --simulated-measurement HEX');
      }
      if (!allowSimulated && measurements.length === 0) {
        throw new UsageError('--simulated-measurement pins the simulation backend, which is refused without --allow-simulated-enclave');
      }
      // Node 20 has no global WebSocket: the evaluator's link uses `ws` (an optional peer dependency).
      const { nodeWebSocket } = await import('../net/node.js');
      return {
        ...(v.enclave !== undefined ? { url: v.enclave as string } : {}),
        WebSocket: await nodeWebSocket(),
        policy: {
          ...(measurements.length > 0 ? { measurements } : {}),
          ...(simulated.length > 0 ? { simulatedMeasurements: simulated } : {}),
          ...(signers.length > 0 ? { simulationSigners: signers } : {}),
        },
        allowSimulatedEnclave: allowSimulated,
        ...(v['allow-plaintext-websocket'] === true ? { allowPlaintextWebSocket: true } : {}),
      };
    },
    terms: [
      ['enclave.url', '--enclave'],
      ['allowPlaintextWebSocket: true', '--allow-plaintext-websocket'],
    ],
    warning: (value) =>
      (value as { allowSimulatedEnclave?: boolean }).allowSimulatedEnclave
        ? "WARNING: --allow-simulated-enclave: the simulation backend is not an enclave; whoever runs the enclave-server can read the garbler's seed (hence its input) and the evaluator's share"
        : undefined,
  },
};

/** Every role flag as `util.parseArgs` options (`eval` and `party` parse them all, then check). */
export const ROLE_OPTIONS: Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly multiple?: true }>> = Object.assign(
  {},
  ...Object.values(ROLE_FLAGS).map((f) => f.options),
);

const names = Object.keys(protocols) as Protocol[];

/** `a, b or c`. */
function either(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** The run options `module` lists (typed per module; here, as the names they are). */
function rolesOf(module: ProtocolModule): readonly string[] {
  return module.roleOptions as readonly string[];
}

/** The protocols whose module lists `role` (`--protocol authgc`, ...). */
function takers(role: string): string {
  return either(names.filter((n) => rolesOf(protocolModule(n)!).includes(role)));
}

/** The registered protocol named `--protocol NAME`. */
export function protocolNamed(name: string): { protocol: Protocol; module: ProtocolModule } {
  const module = protocolModule(name);
  if (!module) throw new UsageError(`--protocol must be ${either(names)}`);
  return { protocol: name as Protocol, module };
}

/** The protocols that compute on `kind` (for messages: `--program runs with --protocol mascot`). */
export function protocolsComputing(kind: 'circuit' | 'program'): string {
  return either(names.filter((n) => protocolModule(n)!.computes === kind));
}

/** Whether `eval --json` reports the number of parties for `protocol`. */
export function reportsParties(protocol: Protocol): boolean {
  return ADAPTERS[protocol]?.jsonParties === true;
}

/**
 * The run options `module` takes, read from their flags. A flag of a run option the protocol
 * does not take is a usage error (a misplaced option is a silent bug otherwise).
 */
export async function roleOptions(module: ProtocolModule, values: FlagValues, ctx: FlagContext): Promise<Record<string, unknown>> {
  for (const [role, flag] of Object.entries(ROLE_FLAGS)) {
    const given = Object.keys(flag.options).find((f) => values[f] !== undefined);
    if (given !== undefined && !rolesOf(module).includes(role)) {
      throw new UsageError(`--${given} applies to --protocol ${takers(role)} only`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const role of rolesOf(module)) {
    const flag = Object.hasOwn(ROLE_FLAGS, role) ? ROLE_FLAGS[role] : undefined;
    const value = await flag?.read(values, ctx);
    if (value !== undefined) out[role] = value;
  }
  return out;
}

/**
 * Lets the module check the run options as party `party` will use them (before anything
 * connects): what it refuses is the caller's mistake, reported in the flags' words.
 */
export function checkRoles(module: ProtocolModule, roles: Record<string, unknown>, party: number, parties: number): void {
  try {
    module.roles(roles, { party, parties });
  } catch (error) {
    if (!(error instanceof WebmpcError && error.code === 'INVALID_ARGUMENT')) throw error;
    let message = error.message;
    for (const role of rolesOf(module)) {
      for (const [sdk, cli] of (Object.hasOwn(ROLE_FLAGS, role) ? ROLE_FLAGS[role]!.terms : undefined) ?? []) {
        message = message.split(sdk).join(cli);
      }
    }
    throw new UsageError(message);
  }
}

/** The warnings the accepted run options call for (printed by `party`). */
export function roleWarnings(module: ProtocolModule, roles: Record<string, unknown>): string[] {
  return rolesOf(module).flatMap((role) => {
    const w = roles[role] !== undefined && Object.hasOwn(ROLE_FLAGS, role) ? ROLE_FLAGS[role]!.warning?.(roles[role]) : undefined;
    return w ? [w] : [];
  });
}

/** `--help` lines: the protocols, from the registry, with the default marked. */
export function protocolHelp(): string {
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const lines = names.map((n) => {
    const m = protocolModule(n)!;
    const parties = m.parties.min === m.parties.max ? `${m.parties.min} parties` : `${m.parties.min}+ parties`;
    const about = ADAPTERS[n]?.about ?? `${m.computes}s, ${m.security}`;
    return wrap(`${' '.repeat(19)}${n.padEnd(width)}`, `${parties}${n === DEFAULT_PROTOCOL ? ' (the default)' : ''}; ${about}`, 19 + width);
  });
  return `  --protocol NAME  what protects the inputs, one of:\n${lines.join('')}`;
}

/** `--help` lines: each role flag, under the protocols that take it (from the registry). */
export function roleHelp(): string {
  const groups = new Map<string, string>();
  for (const [role, flag] of Object.entries(ROLE_FLAGS)) {
    const who = takers(role);
    if (who !== '') groups.set(who, (groups.get(who) ?? '') + flag.help);
  }
  return [...groups].map(([who, help]) => `With --protocol ${who}:\n${help}`).join('');
}

/** `prefix` then `text` wrapped at 100 columns, the lines after the first indented by `indent`. */
function wrap(prefix: string, text: string, indent: number): string {
  const out: string[] = [];
  let line = prefix;
  let fresh = true;
  for (const word of text.split(' ')) {
    if (!fresh && line.length + 1 + word.length > 100) {
      out.push(line);
      line = ' '.repeat(indent) + word;
    } else {
      line += fresh ? word : ` ${word}`;
    }
    fresh = false;
  }
  out.push(line);
  return `${out.join('\n')}\n`;
}
