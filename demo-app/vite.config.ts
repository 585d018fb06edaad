// Vite builds two things from demo-app/:
//   vite build                              the web app          -> demo-app/dist/web/
//   vite build --ssr src/node/bidder.ts     the Node bidder CLI  -> demo-app/dist/node/bidder.mjs,
//                                           and the shared core  -> demo-app/dist/node/{auction,room}.mjs
// (scripts/demo.mjs runs both; it uses the core to check the scripted auction's result). The app imports the SDK by its package name, as an app that
// installed `webmpc` would; here the names point at the repository's built package (dist/).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** `webmpc`, `webmpc/circuit`, ...: the package's exports, resolved in the repository. */
const SDK_ENTRIES: Record<string, string> = {
  webmpc: '../dist/index.js',
  'webmpc/circuit': '../dist/circuit/index.js',
  'webmpc/net': '../dist/net/index.js',
  'webmpc/program': '../dist/program/index.js',
  'webmpc/secure': '../dist/secure/index.js',
  'webmpc/clients': '../dist/clients.js',
};

export default defineConfig(({ isSsrBuild }) =>
  isSsrBuild
    ? {
        root: here('.'),
        logLevel: 'warn',
        build: {
          outDir: here('./dist/node'),
          emptyOutDir: true,
          target: 'node20',
          minify: false,
          rollupOptions: {
            input: { bidder: here('./src/node/bidder.ts'), auction: here('./src/auction.ts'), room: here('./src/room.ts') },
            // Node resolves the SDK itself (the repository's package.json names it `webmpc`),
            // so the bidder runs against the same dist/ as everything else.
            external: [/^webmpc(\/|$)/, /^node:/],
            output: { entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs', format: 'es' },
          },
        },
      }
    : {
        root: here('.'),
        base: './',
        logLevel: 'warn',
        resolve: {
          alias: Object.entries(SDK_ENTRIES).map(([name, path]) => ({ find: new RegExp(`^${name}$`), replacement: here(path) })),
        },
        build: {
          outDir: here('./dist/web'),
          emptyOutDir: true,
          target: 'es2022',
          // libsodium (the secure channels) is one large module; that is expected here.
          chunkSizeWarningLimit: 1024,
          // The SDK's Node-only WebSocket library is loaded by Node code paths only, never in a page.
          rollupOptions: { external: ['ws'] },
        },
      },
);
