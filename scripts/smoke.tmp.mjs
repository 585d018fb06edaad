import { launchEngine } from './lib/engines.mjs';
import { serveStatic } from './lib/static-server.mjs';
const srv = await serveStatic({}, { '/': '<!doctype html><title>x</title><link rel="icon" href="data:,"><script type="module">window.ok = 1;</script>hi' });
for (const e of process.argv.slice(2)) {
  const t0 = Date.now();
  const b = await launchEngine(e);
  console.log(e, b.version, 'launch', Date.now() - t0);
  await b.page.goto(srv.url + '/');
  await b.page.waitForFunction(() => window.ok === 1, undefined, { timeout: 10000 });
  const p2 = await b.newPage();
  await p2.goto(srv.url + '/');
  const t1 = Date.now();
  const [x, y] = await Promise.all([
    b.page.evaluate(async (a) => { await new Promise(r => setTimeout(r, 500)); console.error('err1'); return { a, u: undefined, n: null, arr: [1, 'x'] }; }, { q: 1 }),
    p2.evaluate(async () => { await new Promise(r => setTimeout(r, 300)); setTimeout(() => { throw new Error('late2') }, 0); return typeof RTCPeerConnection; }),
  ]);
  console.log(JSON.stringify(x), y, Date.now() - t1);
  try { await b.page.evaluate(() => { throw new TypeError('thrown'); }); } catch (err) { console.log('threw:', err.message.slice(0, 100)); }
  await new Promise(r => setTimeout(r, 200));
  await p2.evaluate(() => 1);
  console.log('problems', b.problems);
  await p2.close();
  await b.close();
  console.log(e, 'total', Date.now() - t0);
}
await srv.close();
