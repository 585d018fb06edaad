// Client–server runs in one process: servers over an in-memory mesh, each with an in-memory
// client listener; clients dial a server by creating a fresh two-party memory link.
import { createMemoryTransports, type Transport } from '../../dist/index.js';
import { serve, submit, type ClientListener, type ServeOptions, type ServeResult, type SubmitOptions, type SubmitResult } from '../../dist/clients.js';
import { generateIdentity, type Identity } from '../../dist/secure/index.js';

/** An in-memory listener: `connect()` hands the server one end of a fresh link, returns the other. */
export function memoryListener(): ClientListener & { connect(): Transport } {
  let accept: ((t: Transport) => void) | undefined;
  let closed = false;
  // Clients that dial before the server listens wait, as on a socket's backlog.
  const backlog: Transport[] = [];
  return {
    listen(f) {
      accept = f;
      for (const t of backlog.splice(0)) f(t);
    },
    async close() {
      closed = true;
    },
    connect() {
      const [server, client] = createMemoryTransports(2);
      if (closed) void server!.close();
      else if (!accept) backlog.push(server!);
      else accept(server!);
      return client!;
    },
  };
}

export interface Deployment {
  identities: Identity[];
  listeners: ReturnType<typeof memoryListener>[];
  /** Starts every server with `options` (per-server overrides by index). */
  /** `each(j)`: server j's own extra options (the internal `_cheat` among them). */
  serve(options: Omit<ServeOptions, 'transport' | 'identity' | 'clients'>, each?: (server: number) => Record<string, unknown>): Promise<PromiseSettledResult<ServeResult>[]>;
  /** One client's submit (`_cheat`, internal, makes it deviate). */
  submit(options: Omit<SubmitOptions, 'servers'> & { _cheat?: { input?(server: number, eps: Uint8Array): void; signature?(server: number, signature: Uint8Array): void } }): Promise<SubmitResult>;
}

export async function deploy(servers: number): Promise<Deployment> {
  const identities = await Promise.all(Array.from({ length: servers }, () => generateIdentity()));
  const listeners = identities.map(() => memoryListener());
  return {
    identities,
    listeners,
    serve(options, each) {
      const mesh = createMemoryTransports(servers);
      return Promise.allSettled(
        mesh.map((transport, j) => serve({ ...options, transport: transport!, identity: identities[j]!, clients: listeners[j]!, ...(each?.(j) ?? {}) } as ServeOptions)),
      );
    },
    submit(options) {
      return submit({
        ...options,
        servers: identities.map((id, j) => ({ publicKey: id.publicKey, connect: () => listeners[j]!.connect() })),
      } as SubmitOptions);
    },
  };
}

/** A rejection's error (the test fails if it resolved). */
export async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string; peer?: number }> {
  try {
    await p;
  } catch (err) {
    return err as { code?: string; message: string; peer?: number };
  }
  throw new Error('expected a rejection');
}
