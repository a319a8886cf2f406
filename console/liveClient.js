// The console's live updates: GraphQL subscriptions over one WebSocket on /graphql (the
// graphql-transport-ws protocol), signed in by the session's cookie and CSRF token, reconnecting when it drops.
/* global location, WebSocket, setTimeout, clearTimeout, window */
import { session } from './session.js';

/** Close codes after which reconnecting with the same token cannot help (graphql-ws: 4401 Unauthorized, 4403 Forbidden). */
const REFUSED = new Set([4401, 4403]);
const ACK_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * One WebSocket to /graphql for the whole session (protocol graphql-transport-ws), carrying every
 * subscription of the screen on show. It reconnects with exponential backoff (1 s, 2 s, 4 s … 30 s,
 * with jitter) whenever it drops, and subscribes again to what was open. `onStatus` hears
 * `{ state: 'connecting' | 'live' | 'offline' | 'refused', retryAt, reason }`.
 */
export class LiveClient {
  constructor({ onStatus = () => {} }) {
    this.onStatus = onStatus;
    this.subscriptions = new Map(); // id → { query, variables, sink, sent }
    this.nextId = 0;
    this.attempt = 0;
    this.socket = null;
    this.acked = false;
    this.closed = false;
    this.retryTimer = null;
    this.ackTimer = null;
    this.status = { state: 'offline', retryAt: null, reason: null };
    this.onOnline = () => this.reconnectNow();
    window.addEventListener('online', this.onOnline);
    this.connect();
  }

  /**
   * Subscribes; `sink.next(data)` per event, `sink.error(message)` when the service ends it with
   * errors, `sink.resumed()` when it is subscribed again after the socket dropped (events committed
   * meanwhile were missed: read the current state again). Returns the unsubscribe.
   */
  subscribe(query, variables, sink) {
    const id = String(++this.nextId);
    this.subscriptions.set(id, { query, variables, sink, sent: false, resumes: false });
    if (this.acked) this.sendSubscribe(id);
    return () => {
      const sub = this.subscriptions.get(id);
      if (!sub) return;
      this.subscriptions.delete(id);
      if (sub.sent && this.acked) this.send({ id, type: 'complete' });
    };
  }

  /** Reconnects at once (the indicator's button, the browser coming back online). */
  reconnectNow() {
    if (this.closed || this.status.state === 'live' || this.status.state === 'connecting') return;
    clearTimeout(this.retryTimer);
    this.attempt = 0;
    this.connect();
  }

  /** Ends the session's socket for good (sign-out). */
  close() {
    this.closed = true;
    window.removeEventListener('online', this.onOnline);
    clearTimeout(this.retryTimer);
    clearTimeout(this.ackTimer);
    this.subscriptions.clear();
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'signed out');
  }

  setStatus(state, extra = {}) {
    this.status = { state, retryAt: null, reason: null, ...extra };
    this.onStatus(this.status);
  }

  connect() {
    if (this.closed) return;
    this.setStatus('connecting');
    this.acked = false;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
    let socket;
    try {
      socket = new WebSocket(url, 'graphql-transport-ws');
    } catch (error) {
      this.scheduleRetry(String(error));
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => {
      if (socket !== this.socket) return;
      // The cookie went with the upgrade request; the CSRF token proves this page sent it.
      this.send({ type: 'connection_init', payload: { csrf: session.csrf } });
      this.ackTimer = setTimeout(() => socket.close(4504, 'Connection acknowledgement timeout'), ACK_TIMEOUT_MS);
    });
    socket.addEventListener('message', (event) => {
      if (socket === this.socket) this.receive(event.data);
    });
    socket.addEventListener('close', (event) => {
      if (socket !== this.socket) return;
      clearTimeout(this.ackTimer);
      this.socket = null;
      this.acked = false;
      for (const sub of this.subscriptions.values()) sub.sent = false;
      if (this.closed) return;
      if (REFUSED.has(event.code)) {
        this.setStatus('refused', { reason: event.reason || 'The service refused the live connection.' });
        return;
      }
      this.scheduleRetry(event.reason || null);
    });
  }

  scheduleRetry(reason) {
    const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.attempt);
    const delay = Math.round(base / 2 + (Math.random() * base) / 2);
    this.attempt++;
    this.setStatus('offline', { retryAt: Date.now() + delay, reason });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  send(message) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  sendSubscribe(id) {
    const sub = this.subscriptions.get(id);
    if (!sub || sub.sent) return;
    sub.sent = true;
    this.send({ id, type: 'subscribe', payload: { query: sub.query, variables: sub.variables } });
    if (sub.resumes) sub.sink.resumed?.();
    sub.resumes = true;
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      this.socket?.close(4400, 'Invalid message received');
      return;
    }
    switch (message.type) {
      case 'connection_ack':
        clearTimeout(this.ackTimer);
        this.acked = true;
        this.attempt = 0;
        this.setStatus('live');
        for (const id of this.subscriptions.keys()) this.sendSubscribe(id);
        return;
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'next': {
        const sub = this.subscriptions.get(message.id);
        if (!sub) return;
        if (message.payload?.errors?.length && !message.payload.data) sub.sink.error?.(message.payload.errors[0].message);
        else sub.sink.next(message.payload?.data);
        return;
      }
      case 'error': {
        const sub = this.subscriptions.get(message.id);
        this.subscriptions.delete(message.id);
        sub?.sink.error?.(message.payload?.[0]?.message ?? 'The subscription failed.');
        return;
      }
      case 'complete':
        this.subscriptions.delete(message.id);
        return;
      default:
        return;
    }
  }
}
