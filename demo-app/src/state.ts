/** What the auction page is doing, as `window.auctionState` shows it to scripts and tests. */
import type { AuctionResult, PhaseRecord } from './auction.js';
import type { Explained } from './room.js';

export interface AuctionState {
  /**
   * `create`: the create-an-auction form; `ready`: a bidder's page before the bid; `running`;
   * `done` (see `result`); `failed` (see `error`); `bad-link`: the link cannot be used.
   */
  status: 'create' | 'ready' | 'running' | 'done' | 'failed' | 'bad-link';
  /** This bidder's seat, once it has one. */
  seat?: number;
  /** The phase under way (see `PHASE_LABELS`). */
  phase?: string;
  result?: AuctionResult & { phases: readonly PhaseRecord[] };
  error?: Explained;
}

declare global {
  interface Window {
    auctionState: AuctionState;
  }
}
