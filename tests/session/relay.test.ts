// The engine host's relay of its worker's messages (dist/engine/relay.js): however many messages
// arrive at once, the caller's thread handles at most one slice of them per macrotask — so no task
// grows with the batch — in their order, and a message that finds the slice unused is handled at
// once (no added latency when there is little to do). Counted per macrotask: Node runs each
// setImmediate as its own macrotask, in the order they were scheduled, so the relay's next slice
// runs between two of the test's checks.
import { describe, expect, it } from 'vitest';
import * as relayModule from '../../dist/engine/relay.js';
import { RELAY_SLICE, type RelaySlice } from '../../dist/engine/relay.js';

// The relay class is internal (left out of the published declarations).
interface Relay<T> {
  readonly pending: number;
  push(item: T): void;
  stop(): void;
}
const { SlicedRelay } = relayModule as unknown as {
  SlicedRelay: new <T>(handle: (item: T) => void, bytesOf: (item: T) => number, slice?: RelaySlice) => Relay<T>;
};

const nextMacrotask = () => new Promise<void>((r) => setImmediate(r));

/** Feeds `items` (sizes in bytes) in one synchronous burst; returns what each macrotask handled. */
async function slices(sizes: number[], slice = RELAY_SLICE): Promise<{ order: number[]; perTask: { count: number; bytes: number }[] }> {
  const order: number[] = [];
  const perTask: { count: number; bytes: number }[] = [];
  let task = { count: 0, bytes: 0 };
  const relay = new SlicedRelay<number>(
    (i) => {
      order.push(i);
      task.count++;
      task.bytes += sizes[i]!;
    },
    (i) => sizes[i]!,
    slice,
  );
  for (let i = 0; i < sizes.length; i++) relay.push(i);
  for (let guard = 0; guard < 10_000 && (task.count > 0 || relay.pending > 0); guard++) {
    perTask.push(task);
    task = { count: 0, bytes: 0 };
    await nextMacrotask();
  }
  if (task.count > 0) perTask.push(task);
  return { order, perTask };
}

describe('the engine host relays its worker’s messages in bounded slices', () => {
  it('a burst of many small messages: at most one slice of messages per macrotask, in order', async () => {
    const n = 1000;
    const { order, perTask } = await slices(new Array<number>(n).fill(16));
    expect(order).toEqual([...Array(n).keys()]);
    // The first slice went at once, in the task that delivered the burst.
    expect(perTask[0]!.count).toBe(RELAY_SLICE.messages);
    for (const t of perTask) expect(t.count).toBeLessThanOrEqual(RELAY_SLICE.messages);
    expect(perTask.length).toBeGreaterThanOrEqual(Math.ceil(n / RELAY_SLICE.messages));
  });

  it('large messages: at most one slice of bytes per macrotask, unless one message alone is larger', async () => {
    const MiB = 1 << 20;
    // OT-extension windows, small control messages and oversize ones, mixed.
    const sizes = [8 * MiB, 64, 3 * MiB, 3 * MiB, 1 * MiB, 12 * MiB, 64, 64, 2 * MiB, 2 * MiB, 2 * MiB, 5 * MiB, 100];
    const { order, perTask } = await slices(sizes);
    expect(order).toEqual([...sizes.keys()]);
    for (const t of perTask) {
      expect(t.count).toBeLessThanOrEqual(RELAY_SLICE.messages);
      if (t.count > 1) expect(t.bytes).toBeLessThanOrEqual(RELAY_SLICE.bytes);
    }
    // 8 MiB went alone; so did 12 MiB; never two multi-MiB messages past the limit together.
    expect(perTask.filter((t) => t.count > 0).length).toBeGreaterThanOrEqual(7);
  });

  it('little to do: each message is handled at once, in the task that delivered it', async () => {
    const handled: number[] = [];
    const relay = new SlicedRelay<number>((i) => handled.push(i), () => 0, { messages: 2, bytes: 1024 });
    relay.push(1);
    expect(handled).toEqual([1]);
    relay.push(2);
    expect(handled).toEqual([1, 2]);
    // The slice is used up: a third message in the same task waits for the next one.
    relay.push(3);
    expect(handled).toEqual([1, 2]);
    expect(relay.pending).toBe(1);
    await nextMacrotask();
    expect(handled).toEqual([1, 2, 3]);
    // A later task starts a fresh slice: handled at once again.
    await nextMacrotask();
    relay.push(4);
    expect(handled).toEqual([1, 2, 3, 4]);
  });

  it('stop() drops what waits; a handler that throws does not stall the rest', async () => {
    const handled: number[] = [];
    const relay = new SlicedRelay<number>(
      (i) => {
        if (i === 0) throw new Error('handler failure');
        handled.push(i);
      },
      () => 0,
      { messages: 2, bytes: 1 },
    );
    for (let i = 0; i < 5; i++) relay.push(i);
    expect(handled).toEqual([1]);
    await nextMacrotask();
    expect(handled).toEqual([1, 2, 3]);
    relay.stop();
    await nextMacrotask();
    relay.push(9);
    expect(handled).toEqual([1, 2, 3]);
    expect(relay.pending).toBe(0);
  });
});
