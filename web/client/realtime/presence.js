/**
 * Who is online (spec §6.2): seeded from `GET /api/chat/presence` each time the socket says
 * `hello` (a reconnect may have missed transitions), kept current by `presence` frames, unknown
 * while the socket is down (no dot rather than a stale one). `PresenceDot` draws it next to a
 * user: the Salesperson-style links to `User` in forms and lists, as Odoo's avatar widgets do.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { onRealtime, onRealtimeStatus } from './socket.js';

/** @type {Set<number>} */
const online = new Set();
let known = false;
let seedSeq = 0;
/** @type {Set<() => void>} */
const listeners = new Set();
let started = false;

function changed() {
  for (const listener of [...listeners]) listener();
}

/** Starts following presence (once); the socket module does the connecting. */
export function followPresence() {
  if (started) return;
  started = true;
  onRealtimeStatus((up) => {
    const seq = ++seedSeq;
    if (!up) {
      known = false;
      online.clear();
      changed();
      return;
    }
    api.get('/api/chat/presence', { quiet401: true }).then(
      (ids) => {
        if (seq !== seedSeq || !Array.isArray(ids)) return;
        online.clear();
        for (const id of ids) if (typeof id === 'number') online.add(id);
        known = true;
        changed();
      },
      () => {
        // presence unavailable (503 while Redis is away): no dots rather than wrong ones
      },
    );
  });
  onRealtime('presence', (data) => {
    if (typeof data.user_id !== 'number') return;
    if (data.online) online.add(data.user_id);
    else online.delete(data.user_id);
    changed();
  });
}

/**
 * Whether a user is online: `true`/`false`, or `null` while unknown (socket down, not seeded yet).
 * @param {number | null | undefined} userId
 * @returns {boolean | null}
 */
export function usePresence(userId) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  }, []);
  if (!known || typeof userId !== 'number') return null;
  return online.has(userId);
}

/**
 * A small dot before a user's name: green when online, hollow grey when not, nothing while
 * unknown. Named for screen readers ("Online" / "Offline").
 * @param {{userId: number | null | undefined}} props
 */
export function PresenceDot({ userId }) {
  const state = usePresence(userId);
  if (state === null) return null;
  const label = state ? 'Online' : 'Offline';
  return html`<span class=${`ff-presence ${state ? 'ff-presence-online' : 'ff-presence-offline'}`} role="img" aria-label=${label} title=${label}
    data-presence=${state ? 'online' : 'offline'}></span>`;
}
