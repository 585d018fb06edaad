// The far end of a transport benchmark, in its own process (so sender and receiver each get a
// core, as two real parties would): connects as configured, then echoes messages of up to 64
// bytes back whole and answers every longer message with one byte.
// argv: impl ('ws' | 'node-datachannel' | '@roamhq/wrtc' | 'ws-relay'), JSON config.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [impl, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const net = await import(pathToFileURL(join(config.root, 'dist', 'net', 'node.js')).href);
let transport;
if (impl === 'ws') {
  transport = await net.connectWebSocketMesh(config.options);
} else if (impl === 'ws-relay') {
  transport = await net.connectNodeRelay(config.options);
} else if (impl === '@roamhq/wrtc') {
  const wrtc = (await import('@roamhq/wrtc')).default;
  transport = await net.connectNodeMesh({ ...config.options, RTCPeerConnection: wrtc.RTCPeerConnection });
} else {
  transport = await net.connectNodeMesh(config.options);
}
const other = 1 - transport.party;
const ack = Uint8Array.of(1);
for (;;) {
  let msg;
  try {
    msg = await transport.recv(other, { timeoutMs: 600_000 });
  } catch {
    break; // The benchmark closed the session.
  }
  await transport.send(other, msg.byteLength <= 64 ? msg : ack);
}
await transport.close();
process.exit(0);
