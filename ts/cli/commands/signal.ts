/** `webmpc signal`: the WebRTC signaling server (and, with --relay, the WebSocket frame relay). */
import { integerOption, parseCommand } from '../args.js';
import { untilStopped } from '../signals.js';


const USAGE =
  'usage: webmpc signal [--port N] [--host H] [--relay] [--ice URL]... [--ice-username U --ice-credential C]\n' +
  '  Runs the signaling server that introduces the parties of a room to each other (WebRTC offers,\n' +
  '  answers and candidates); it never sees the computation. Stops on Ctrl-C (SIGINT) or SIGTERM.\n' +
  '  --port N          TCP port to listen on (default 8787; 0 picks a free one, printed on start)\n' +
  '  --host H          interface to bind (default 127.0.0.1, this machine only; 0.0.0.0 serves\n' +
  '                    other machines)\n' +
  '  --relay           also relay frames at ws://HOST:PORT/relay, for parties without a\n' +
  '                    peer-to-peer path (they then use connectRelay instead of WebRTC)\n' +
  '  --ice URL         a STUN or TURN server handed to every joining party, e.g.\n' +
  '                    stun:stun.example.org:3478 (repeatable; default none: enough on one network)\n' +
  '  --ice-username U, --ice-credential C\n' +
  '                    the credentials of the TURN servers given with --ice\n' +
  '  Limits per client address: 32 connections and 8 rooms; a connection must join a room within\n' +
  '  10 s and is dropped after 10 min without traffic.\n';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(
    args,
    {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      relay: { type: 'boolean', default: false },
      ice: { type: 'string', multiple: true },
      'ice-username': { type: 'string' },
      'ice-credential': { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values } = parsed;
  const port = integerOption(values.port, '--port', 0, 65_535)!;
  const { startSignalingServer } = await import('../../net/server.js');
  const iceServers = (values.ice ?? []).map((url) => {
    const server: { urls: string; username?: string; credential?: string } = { urls: url };
    if (values['ice-username'] !== undefined) server.username = values['ice-username'];
    if (values['ice-credential'] !== undefined) server.credential = values['ice-credential'];
    return server;
  });
  const server = await startSignalingServer({ port, host: values.host, relay: values.relay, iceServers });
  process.stdout.write(`webmpc signal: listening on ${server.url}${values.relay ? ` (relay at ${server.url}/relay)` : ''}\n`);
  await untilStopped();
  await server.close();
  return 0;
}
