// The evaluator's enclave link against a scripted socket: what the socket delivers between its
// `open` event and the moment `EnclaveLink.connect` has built the link is kept, not dropped. In
// Node, `ws` can emit the first message (the enclave's evidence, when it arrived in the same
// read as the upgrade response, as happens on a loaded machine) in the `process.nextTick` right
// after `open`, before the awaiting code resumes; a dropped evidence frame left both parties of a
// teleport session waiting until their timeouts.
import { describe, expect, it } from 'vitest';
import { EnclaveLink } from '../../dist/enclave/index.js';

type Handler<E> = ((event: E) => void) | null;

/** A WebSocket that opens, then delivers `script` in the next ticks (not macrotasks). */
function scriptedSocket(script: ({ data: ArrayBuffer } | { close: number })[]) {
  const sent: Uint8Array[] = [];
  class Scripted {
    binaryType = 'blob';
    readyState = 0;
    bufferedAmount = 0;
    onopen: Handler<unknown> = null;
    onmessage: Handler<{ data: unknown }> = null;
    onclose: Handler<{ code: number }> = null;
    onerror: Handler<unknown> = null;
    constructor(_url: string) {
      setTimeout(() => {
        this.readyState = 1;
        this.onopen?.({});
        // As `ws` does: the stream resumes in a nextTick, ahead of promise continuations.
        process.nextTick(() => {
          for (const step of script) {
            if ('data' in step) this.onmessage?.({ data: step.data });
            else {
              this.readyState = 3;
              this.onclose?.({ code: step.close });
            }
          }
        });
      }, 0);
    }
    send(data: Uint8Array) {
      sent.push(data);
    }
    close() {
      this.readyState = 3;
    }
  }
  return { WebSocket: Scripted as unknown as new (url: string) => never, sent };
}

describe('EnclaveLink', () => {
  it('keeps frames that arrive right after open, before the link exists', async () => {
    const frames = [Uint8Array.of(1, 7, 7, 7), Uint8Array.of(0, 9, 9)];
    const { WebSocket } = scriptedSocket(frames.map((f) => ({ data: f.slice().buffer })));
    const link = await EnclaveLink.connect({ url: 'ws://localhost/scripted', WebSocket, recvTimeoutMs: 2_000 });
    expect(await link.recv()).toEqual(frames[0]);
    expect(await link.recv()).toEqual(frames[1]);
    await link.close();
  });

  it('sees a close that happens right after open, instead of waiting for its timeout', async () => {
    const { WebSocket } = scriptedSocket([{ data: Uint8Array.of(1, 5).buffer }, { close: 1011 }]);
    const link = await EnclaveLink.connect({ url: 'ws://localhost/scripted', WebSocket, recvTimeoutMs: 60_000 });
    expect(await link.recv()).toEqual(Uint8Array.of(1, 5));
    const t0 = performance.now();
    await expect(link.recv()).rejects.toMatchObject({ code: 'ENCLAVE_UNAVAILABLE' });
    // Far below the 60 s deadline it would otherwise have waited; the margin is for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(15_000);
  });
});
