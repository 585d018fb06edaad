#!/usr/bin/env node
/**
 * The `webmpc` command: a dispatcher of subcommands, so later tools (scripted parties, the
 * enclave server, ...) join as entries of {@link COMMANDS}.
 *
 *   webmpc signal [--port N] [--host H] [--relay] [--ice URL]... [--ice-username U --ice-credential C]
 */
import { parseArgs } from 'node:util';

interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  signal: {
    summary: 'run the WebRTC signaling server (and, with --relay, the WebSocket frame relay)',
    run: runSignal,
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `usage: webmpc <command> [options]\n\ncommands:\n${lines.join('\n')}\n`;
}

async function runSignal(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      relay: { type: 'boolean', default: false },
      ice: { type: 'string', multiple: true },
      'ice-username': { type: 'string' },
      'ice-credential': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      'usage: webmpc signal [--port N] [--host H] [--relay] [--ice stun:host:port]... ' +
        '[--ice-username U --ice-credential C]\n' +
        '  --host     interface to bind (default 127.0.0.1; 0.0.0.0 serves other machines)\n' +
        '  --relay    also relay frames at /relay for parties without a peer-to-peer path\n' +
        '  --ice      a STUN/TURN URL handed to joining parties (repeatable; none by default)\n',
    );
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write('webmpc signal: --port must be an integer in [0, 65535]\n');
    return 2;
  }
  const { startSignalingServer } = await import('./net/server.js');
  const urls = values.ice ?? [];
  const iceServers = urls.map((url) => {
    const server: { urls: string; username?: string; credential?: string } = { urls: url };
    if (values['ice-username'] !== undefined) server.username = values['ice-username'];
    if (values['ice-credential'] !== undefined) server.credential = values['ice-credential'];
    return server;
  });
  const server = await startSignalingServer({ port, host: values.host, relay: values.relay, iceServers });
  process.stdout.write(`webmpc signal: listening on ${server.url}${values.relay ? ` (relay at ${server.url}/relay)` : ''}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`webmpc: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    process.stderr.write(`webmpc ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
