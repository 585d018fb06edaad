// A static file server for the browser tests and benchmarks: only what a CDN or `npx serve` would
// do for the package (right MIME types, notably application/wasm, which instantiateStreaming
// insists on).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

/** @type {Record<string, string>} */
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/**
 * @typedef {object} StaticServer
 * @property {string} url
 * @property {string[]} requests paths requested so far
 * @property {() => Promise<void>} close
 */

/**
 * Serves each directory of `mounts` (URL prefix ending in '/' -> directory) and `pages` (path ->
 * HTML) on 127.0.0.1 only, unless `options.host` names another interface (the demo serves the
 * auction app on 0.0.0.0 when asked, so other machines can join). A path ending in '/' serves
 * that directory's index.html.
 * @param {Record<string, string>} mounts
 * @param {Record<string, string>} [pages]
 * @param {{ host?: string, port?: number }} [options] interface (default 127.0.0.1) and port (default: a free one)
 * @returns {Promise<StaticServer>}
 */
export async function serveStatic(mounts, pages = {}, options = {}) {
  const host = options.host ?? '127.0.0.1';
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  /** @type {string[]} */
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    requests.push(path);
    const page = pages[path];
    if (page !== undefined) {
      res.writeHead(200, { 'content-type': MIME['.html'], 'cache-control': 'no-store' });
      res.end(page);
      return;
    }
    if (path === '/favicon.ico') {
      // Browsers ask for it unprompted; a 404 would show up as a console error.
      res.writeHead(204).end();
      return;
    }
    const prefix = prefixes.find((p) => path.startsWith(p));
    if (prefix === undefined) {
      res.writeHead(404).end();
      return;
    }
    const root = /** @type {string} */ (mounts[prefix]);
    const rel = path.slice(prefix.length);
    const file = normalize(join(root, rel === '' || rel.endsWith('/') ? `${rel}index.html` : rel));
    if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': MIME[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve(undefined));
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
