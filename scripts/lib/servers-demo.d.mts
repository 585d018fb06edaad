// Types of servers-demo.mjs for the TypeScript tests.
export interface ServersAuctionClient {
  outputs: bigint[];
  index: number;
  clients: number;
  /** How many inputs the outputs are over (every server said the same). */
  counted: number;
  /** Given by a `webmpc submit` process. */
  cli?: boolean;
}

export interface ServersAuctionServer {
  outputs: string[];
  clients: number;
  dropped: { client: string; reason: string }[];
  ms: number;
  phases: { window: number; ahead: number; masks: number; inputs: number; compute: number; output: number };
  maxRssKb: number;
}

export function serversAuction(options: {
  root: string;
  servers: number;
  bids: bigint[];
  bits?: number;
  host?: string;
  timeoutS?: number;
  protocol?: 'mascot' | 'authgc';
  program?: 'vickrey' | 'sum';
  method?: 'bitwise' | 'tournament';
  cliClients?: number;
  extraClients?: number;
  /** Most scripted bidders in this process; more go to client-pool processes (default 3,000). */
  maxInProcess?: number;
  onListening?: (where: { urls: string[]; keys: string[]; session: string }) => void;
  say?: (line: string) => void;
}): Promise<{
  clients: ServersAuctionClient[];
  errors: (Error | undefined)[];
  bytes: { sent: number; received: number }[];
  servers: ServersAuctionServer[];
  ms: { start: number; run: number; total: number };
}>;
