/**
 * The auction page. Without `?room=…` it offers to create an auction (bidder count, engine) and
 * gives the shareable link; with one, it is a bidder's seat: the bid is typed here and never
 * leaves this page except as the protocol's messages. Progress (connecting, key exchange,
 * protocol phases with their %), the result, the per-phase times and bytes, and every failure are
 * shown; `window.auctionState` mirrors them for scripts and tests.
 */
import { init, prestartWorker } from 'webmpc';
import { connectMesh, type MeshPeerState } from 'webmpc/net';
import { generateIdentity, publicKeyFromHex, publicKeyToHex, type Identity } from 'webmpc/secure';
import {
  BID_BITS,
  DEFAULT_ENGINE,
  ENGINES,
  isOffered,
  MAX_BID,
  MAX_BIDDERS,
  MIN_BIDDERS,
  PhaseClock,
  parseBid,
  phaseLabel,
  placeBid,
  type AuctionResult,
  type EngineName,
  type PhaseRecord,
  type PhaseUpdate,
} from './auction.js';
import { explain, joinRoom, linkUrl, newRoomName, parseLink, secureRoom, shortFingerprint, type AuctionLink, type Explained, type PeerIdentity } from './room.js';
import type { AuctionState } from './state.js';
import './style.css';

/** Default wait for every bidder to arrive (the link's `wait`, in seconds, overrides it). */
const DEFAULT_WAIT_S = 600;

// --- tiny DOM helpers --------------------------------------------------------------------------

type Child = Node | string | null | undefined | false;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

function setState(next: Partial<AuctionState>): void {
  window.auctionState = { ...window.auctionState, ...next };
  document.body.dataset.status = window.auctionState.status;
}

const app = document.getElementById('app')!;

function formatBytes(n: number | undefined): string {
  if (n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

// --- configuration -----------------------------------------------------------------------------

/** The signaling server: the link's, else the one in config.json next to the app, else port 8787 here. */
async function defaultSignalingUrl(): Promise<string> {
  try {
    const res = await fetch('./config.json', { cache: 'no-store' });
    if (res.ok) {
      const config = (await res.json()) as { signalingUrl?: unknown };
      if (typeof config.signalingUrl === 'string') return config.signalingUrl;
    }
  } catch {
    // No config: fall through to the convention.
  }
  return `ws://${location.hostname || '127.0.0.1'}:8787`;
}

// --- the create page ---------------------------------------------------------------------------

function showCreate(): void {
  setState({ status: 'create' });
  const count = h('input', { type: 'number', id: 'bidders', min: String(MIN_BIDDERS), max: String(MAX_BIDDERS), value: '3', required: '' });
  const engine = h('select', { id: 'engine' });
  for (const e of Object.values(ENGINES)) {
    if (e.available && !isOffered(e)) continue; // plain, once a private engine exists
    const option = h('option', { value: e.name }, e.available ? e.label : `${e.label} (not in this build yet)`);
    if (!e.available) option.disabled = true;
    if (e.name === DEFAULT_ENGINE) option.selected = true;
    engine.append(option);
  }
  const form = h(
    'form',
    { id: 'create' },
    h('label', { for: 'bidders' }, 'Number of bidders'),
    count,
    h('label', { for: 'engine' }, 'Engine'),
    engine,
    h('button', { type: 'submit', id: 'create-button' }, 'Create the auction room'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const n = Number(count.value);
    const link = { room: newRoomName(), bidders: n, engine: engine.value as EngineName, signalingUrl: undefined };
    location.search = new URL(linkUrl(location.href, link)).search;
  });
  app.replaceChildren(
    h('h1', {}, 'Sealed-bid auction'),
    h(
      'p',
      {},
      'Every bidder types a bid in their own browser. The browsers compute, together, who bid highest and the second-highest bid ',
      '(the price the winner pays) with secure multi-party computation: no bid ever leaves its browser in the clear, and nobody, ',
      'not even a server, learns anything else about the bids.',
    ),
    form,
  );
}

// --- a bidder's page ---------------------------------------------------------------------------

interface View {
  seatLine: HTMLElement;
  peers: HTMLElement;
  confirm: HTMLElement;
  phases: HTMLElement;
  outcome: HTMLElement;
}

function showBadLink(problem: string): void {
  setState({ status: 'bad-link', error: { title: problem, detail: '', code: 'BAD_LINK', phase: 'link', peer: undefined } });
  app.replaceChildren(
    h('h1', {}, 'Sealed-bid auction'),
    h('div', { class: 'failure', role: 'alert', 'data-testid': 'error' }, h('strong', {}, problem)),
    h('p', {}, h('a', { href: location.pathname }, 'Create a new auction')),
  );
}

async function showAuction(link: AuctionLink, waitS: number): Promise<void> {
  const engine = ENGINES[link.engine];
  const signalingUrl = link.signalingUrl ?? (await defaultSignalingUrl());
  const shareUrl = linkUrl(location.href, { ...link, seat: undefined });
  setState({ status: 'ready' });

  const keyLine = h('code', { 'data-testid': 'own-key' }, 'generating…');
  const bidInput = h('input', {
    id: 'bid',
    inputmode: 'numeric',
    autocomplete: 'off',
    placeholder: `0 … ${MAX_BID}`,
    'aria-describedby': 'bid-help',
    disabled: '',
  });
  const bidButton = h('button', { type: 'submit', id: 'bid-button', disabled: '' }, 'Place sealed bid');
  const bidHelp = h('p', { id: 'bid-help', class: 'help' }, `A whole number from 0 to ${MAX_BID} (${BID_BITS} bits). It stays in this browser.`);
  const form = h('form', { id: 'bid-form' }, h('label', { for: 'bid' }, 'Your bid'), bidInput, bidButton, bidHelp);
  const copy = h('button', { type: 'button', id: 'copy-link' }, 'Copy');
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(shareUrl).then(() => (copy.textContent = 'Copied'), () => {});
  });

  const view: View = {
    seatLine: h('p', { 'data-testid': 'seat' }),
    peers: h('ul', { class: 'peers', 'data-testid': 'peers' }),
    confirm: h('div', { 'data-testid': 'confirm' }),
    phases: h('ol', { class: 'phases', 'data-testid': 'phases' }),
    outcome: h('div', { 'data-testid': 'outcome' }),
  };

  app.replaceChildren(
    h('h1', {}, 'Sealed-bid auction'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Room'),
      h('dd', { 'data-testid': 'room' }, link.room),
      h('dt', {}, 'Bidders'),
      h('dd', {}, String(link.bidders)),
      h('dt', {}, 'Engine'),
      h('dd', { 'data-testid': 'engine' }, engine.label),
      h('dt', {}, 'Security'),
      h('dd', { class: engine.name === 'plain' ? 'warning' : '' }, engine.security),
      h('dt', {}, 'Your key'),
      h('dd', {}, keyLine),
    ),
    h('div', { class: 'share' }, h('label', { for: 'share' }, 'Invite the other bidders with this link'), h('input', { id: 'share', readonly: '', value: shareUrl }), copy),
    form,
    h('section', { class: 'progress' }, view.seatLine, view.peers, view.confirm, view.phases),
    view.outcome,
  );

  let identity: Identity;
  try {
    await init();
    identity = await generateIdentity();
  } catch (err) {
    fail(view, explain(err, 'loading'));
    return;
  }
  keyLine.textContent = shortFingerprint(publicKeyToHex(identity.publicKey));
  keyLine.title = publicKeyToHex(identity.publicKey);
  bidInput.disabled = false;
  bidButton.disabled = false;
  bidInput.focus();

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const bid = parseBid(bidInput.value);
    if (bid === undefined) {
      bidHelp.textContent = `Not a valid bid: type a whole number from 0 to ${MAX_BID}.`;
      bidHelp.classList.add('invalid');
      return;
    }
    bidInput.disabled = true;
    bidButton.disabled = true;
    form.replaceChildren(h('p', { 'data-testid': 'own-bid' }, `Your sealed bid: ${bid} (stays in this browser).`));
    void bidAndShow(view, link, signalingUrl, identity, bid, waitS);
  });
}

async function bidAndShow(view: View, link: AuctionLink, signalingUrl: string, identity: Identity, bid: number, waitS: number): Promise<void> {
  const abort = new AbortController();
  const rows = new Map<string, HTMLElement>();
  const clock = new PhaseClock((u) => showPhase(view, rows, u));
  setState({ status: 'running' });
  const cancel = h('button', { type: 'button', id: 'cancel' }, 'Cancel');
  cancel.addEventListener('click', () => abort.abort());
  view.outcome.replaceChildren(cancel);
  try {
    // The session's engine worker starts while this page waits for the others and connects.
    prestartWorker();
    clock.enter('connecting');
    const deadline = performance.now() + waitS * 1000;
    const tick = setInterval(() => {
      const left = Math.max(0, Math.round((deadline - performance.now()) / 1000));
      const row = rows.get('connecting');
      const note = row?.querySelector('.note');
      if (note) note.textContent = `waiting for all ${link.bidders} bidders (gives up in ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')})`;
    }, 500);
    let mesh;
    const arrivals = new Map<number, MeshPeerState>();
    try {
      mesh = await joinRoom({
        connect: (o) => connectMesh(o),
        signalingUrl,
        room: link.room,
        bidders: link.bidders,
        seat: link.seat,
        waitMs: waitS * 1000,
        signal: abort.signal,
        onSeat: (seat) => {
          setState({ seat });
          view.seatLine.textContent = `You are bidder ${seat} (of ${link.bidders}).`;
          arrivals.clear();
          showPeers(view, link.bidders, seat, arrivals);
        },
        onPeer: (bidder, state) => {
          arrivals.set(bidder, state);
          showPeers(view, link.bidders, window.auctionState.seat!, arrivals);
        },
      });
    } finally {
      clearInterval(tick);
    }
    // (A bidder who closes the page tells the others at once: the SDK's mesh aborts on pagehide.)
    showPeers(view, link.bidders, mesh.party, undefined, true);
    clock.enter('securing');
    const { transport, peers } = await secureRoom({
      transport: mesh,
      identity,
      room: link.room,
      signal: abort.signal,
      confirm: (peers, { signal }) => {
        clock.enter('confirming');
        showPeers(view, link.bidders, mesh.party, peers, true);
        return askToConfirm(view, signal);
      },
    });
    showPeers(view, link.bidders, mesh.party, peers, true);
    view.confirm.replaceChildren();
    const result = await placeBid({ transport, bid, engine: link.engine, clock, signal: abort.signal });
    clock.end();
    showResult(view, result, clock.records);
  } catch (err) {
    clock.end();
    fail(view, explain(err, clock.phase ?? 'connecting', { signalingUrl }), rows);
  }
}

/**
 * The bidders' list: while connecting, who is in the room and whose connection is open
 * (`arrivals`); once connected, each other bidder's key as the key exchange proved it.
 */
function showPeers(
  view: View,
  bidders: number,
  me: number,
  known: ReadonlyMap<number, MeshPeerState> | readonly PeerIdentity[] | undefined,
  connected = false,
): void {
  const items: HTMLElement[] = [];
  for (let i = 0; i < bidders; i++) {
    const item = h('li', { 'data-bidder': String(i) });
    items.push(item);
    if (i === me) {
      item.append(h('strong', {}, `Bidder ${i} (you)`));
      continue;
    }
    if (!connected) {
      const state = known instanceof Map ? known.get(i) : undefined;
      item.dataset.state = state ?? 'waiting';
      item.append(`Bidder ${i}: `, state === 'connected' ? 'connected' : state === 'present' ? 'here, connecting…' : 'not here yet');
      continue;
    }
    item.dataset.state = 'connected';
    const p = Array.isArray(known) ? known.find((x) => x.bidder === i) : undefined;
    item.append(`Bidder ${i}: connected`);
    if (!p) {
      item.append(' · exchanging keys…');
      continue;
    }
    if (!p.pinned) item.append(' · code ', h('strong', { class: 'sas', 'data-testid': `sas-${i}` }, p.sas));
    item.append(' · key ', h('code', { title: p.fingerprint }, shortFingerprint(p.fingerprint)), p.pinned ? ' (pinned)' : '');
  }
  view.peers.replaceChildren(...items);
}

function showPhase(view: View, rows: Map<string, HTMLElement>, u: PhaseUpdate): void {
  setState({ phase: u.phase });
  for (const [name, row] of rows) if (name !== u.phase && row.classList.contains('active')) finishRow(row);
  let row = rows.get(u.phase);
  if (!row) {
    row = h('li', { class: 'active', 'data-phase': u.phase }, h('span', { class: 'name' }, phaseLabel(u.phase)), h('progress', { max: '1' }), h('span', { class: 'note' }));
    rows.set(u.phase, row);
    view.phases.append(row);
  }
  const bar = row.querySelector('progress')!;
  if (u.total > 0) {
    bar.value = u.done / u.total;
    row.querySelector('.note')!.textContent = `${Math.floor((100 * u.done) / u.total)} %`;
  } else {
    bar.removeAttribute('value'); // indeterminate
  }
}

/**
 * Asks the person to compare the codes with the other bidders; resolves with their answer, or
 * false (taking the question down) when `signal` says it no longer matters.
 */
function askToConfirm(view: View, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'button', id: 'codes-match' }, 'All codes match');
    const no = h('button', { type: 'button', id: 'codes-differ', class: 'secondary' }, 'A code differs');
    const done = (answer: boolean) => {
      signal.removeEventListener('abort', moot);
      view.confirm.replaceChildren(h('p', { class: 'help' }, answer ? 'Codes confirmed; waiting for the other bidders to confirm theirs…' : 'You said a code differs.'));
      resolve(answer);
    };
    const moot = () => {
      view.confirm.replaceChildren();
      resolve(false);
    };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    signal.addEventListener('abort', moot, { once: true });
    view.confirm.replaceChildren(
      h(
        'div',
        { class: 'ask', role: 'group', 'aria-label': 'Compare the codes' },
        h('p', {}, h('strong', {}, 'Compare the codes before bidding. '), 'Each pair of bidders sees the same six-digit code for its connection: ask each other bidder (by phone, in person) which code they see for you. A different code means someone is in between.'),
        yes,
        no,
      ),
    );
    yes.focus();
  });
}

/** Marks a phase row finished: a full bar, no note. */
function finishRow(row: HTMLElement): void {
  row.classList.replace('active', 'finished');
  row.querySelector('progress')!.value = 1;
  row.querySelector('.note')!.textContent = '';
}

function showResult(view: View, result: AuctionResult, phases: readonly PhaseRecord[]): void {
  setState({ status: 'done', result: { ...result, phases: [...phases] } });
  view.phases.querySelectorAll<HTMLElement>('li.active').forEach(finishRow);
  const me = window.auctionState.seat;
  const headline =
    result.winner === me
      ? `You win! You pay ${result.price}, the second-highest bid.`
      : `Bidder ${result.winner} wins and pays ${result.price}, the second-highest bid.`;
  const total = phases.reduce((s, p) => s + p.ms, 0);
  const table = h(
    'table',
    { 'data-testid': 'phase-table' },
    h('thead', {}, h('tr', {}, h('th', {}, 'phase'), h('th', {}, 'time'), h('th', {}, 'bytes sent by you'))),
    h(
      'tbody',
      {},
      ...phases.map((p) => h('tr', {}, h('td', {}, phaseLabel(p.phase)), h('td', {}, formatMs(p.ms)), h('td', {}, formatBytes(p.bytesSent)))),
      h('tr', { class: 'total' }, h('td', {}, 'total'), h('td', {}, formatMs(total)), h('td', {}, formatBytes(result.bytesSent))),
    ),
  );
  view.outcome.replaceChildren(
    h(
      'div',
      { class: 'result', role: 'status', 'data-testid': 'result' },
      h('h2', {}, headline),
      h('p', {}, `Winner: bidder ${result.winner} · price: ${result.price} · ${result.bidders} bidders · engine ${result.engine} · ${result.size}`),
      h('p', { class: 'help' }, 'Ties go to the lowest-numbered bidder, who then pays the tied bid. No other bid is revealed.'),
      table,
    ),
  );
}

function fail(view: View, e: Explained, rows?: Map<string, HTMLElement>): void {
  setState({ status: 'failed', error: e });
  // The phase that failed: its row, or (when the failure came before its first progress report,
  // e.g. a check at the start of a protocol phase) the row under way.
  const row = rows?.get(e.phase) ?? [...(rows?.values() ?? [])].find((r) => r.classList.contains('active'));
  row?.classList.replace('active', 'failed');
  view.outcome.replaceChildren(
    h(
      'div',
      { class: 'failure', role: 'alert', 'data-testid': 'error' },
      h('h2', {}, 'The auction was aborted'),
      h('p', {}, h('strong', {}, e.title)),
      h('p', { class: 'detail' }, `Phase: ${phaseLabel(e.phase)} · ${e.detail}`),
      h('p', {}, 'There is no result. ', h('a', { href: location.href }, 'Try again'), ' (every bidder must reload the link).'),
    ),
  );
}

// --- entry ---------------------------------------------------------------------------------------

// --- a bidder of an auction run by compute parties (`npm run demo -- --servers S`) --------------

/**
 * `?servers=ws://…,ws://…&keys=HEX,HEX&session=ID`: the auction is computed by the listed
 * compute parties (their keys pinned from the link); this page only gives its bid, secret-shared
 * to them (`webmpc/clients`' submit), and shows the result every one of them sent.
 */
function showServersBidder(query: URLSearchParams): void {
  const urls = (query.get('servers') ?? '').split(',').filter(Boolean);
  const keys = (query.get('keys') ?? '').split(',').filter(Boolean);
  const session = query.get('session') ?? '';
  if (urls.length < 2 || keys.length !== urls.length || !/^[A-Za-z0-9_.:-]{1,128}$/.test(session)) {
    showBadLink('a servers link needs servers=ws://…,… with one key per server in keys=… and a session');
    return;
  }
  setState({ status: 'ready' });
  const bid = h('input', { type: 'text', id: 'bid', inputmode: 'numeric', autocomplete: 'off', required: '' });
  const button = h('button', { type: 'submit', id: 'bid-button' }, 'Place my sealed bid');
  const status = h('p', { id: 'status' }, `${urls.length} compute parties run this auction; your bid is split between them.`);
  const form = h('form', { id: 'bid-form' }, h('label', { for: 'bid' }, `Your bid (a whole number from 0 to ${MAX_BID})`), bid, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = parseBid(bid.value);
    if (value === undefined) {
      status.textContent = `A bid is a whole number from 0 to ${MAX_BID}.`;
      return;
    }
    button.disabled = true;
    bid.disabled = true;
    setState({ status: 'running', phase: 'window' });
    status.textContent = 'Waiting for the other bidders and the compute parties…';
    void (async () => {
      try {
        await init();
        const { submit, dialServer } = await import('webmpc/clients');
        const servers = urls.map((url, j) => ({ publicKey: publicKeyFromHex(keys[j]!), connect: () => dialServer(url) }));
        const r = await submit({
          servers,
          sessionId: session,
          input: BigInt(value),
          onProgress: (p) => {
            setState({ phase: p.phase });
            if (p.phase === 'inputs') status.textContent = 'Your bid is in; the compute parties are computing…';
          },
        });
        const [winner, price] = r.outputs as [bigint, bigint];
        const won = BigInt(r.index) === winner;
        setState({
          status: 'done',
          seat: r.index,
          result: { winner: Number(winner), price: Number(price), engine: 'mascot', bidders: r.clients, size: `${urls.length} compute parties`, bytesSent: 0, phases: [] },
        });
        status.textContent = won
          ? `You won, among ${r.clients} bidders; you pay ${price} (the second-highest bid).`
          : `Bidder ${winner} won among ${r.clients} bidders and pays ${price}; you were bidder ${r.index}.`;
      } catch (err) {
        const e = explain(err, 'connecting');
        setState({ status: 'failed', error: e });
        status.textContent = `${e.title}: ${e.detail}`;
      }
    })();
  });
  app.replaceChildren(h('h1', {}, `Sealed-bid auction ${session}`), status, form);
}

window.auctionState = { status: 'create' };
const query = new URLSearchParams(location.search);
const link = parseLink(query);
if (query.has('servers')) showServersBidder(query);
else if (link === undefined) showCreate();
else if ('problem' in link) showBadLink(link.problem);
else {
  const wait = Number(query.get('wait') ?? DEFAULT_WAIT_S);
  void showAuction(link, Number.isFinite(wait) && wait > 0 ? wait : DEFAULT_WAIT_S);
}
