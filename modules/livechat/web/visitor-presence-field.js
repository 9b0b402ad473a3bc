/**
 * The visitor's side as agents see it live (CONTRACTS C5 "Agents"), from the main socket's
 * `livechat_presence`, `livechat_typing` and `livechat_message` events of the session:
 *
 * * `widget: visitor_presence` (the Boolean `visitor_online`), on the form and in the list's cell:
 *   a dot, green while the visitor's widget is connected and hollow when not, with its word;
 * * `VisitorTyping`, a part of the session's chatter: "Vera is typing…" for a few seconds after
 *   each `livechat_typing`, gone as soon as the visitor's message arrives.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from 'fieldforge/web/lib/html.js';
import { controlAttributes } from 'fieldforge/web/client/fields/control-attributes.js';
import { onRealtime } from 'fieldforge/web/client/realtime/socket.js';

/** How long "… is typing" stays after the last `typing` (the visitor's widget repeats it every 3 s while typing). */
export const TYPING_SHOWN_MS = 5_000;

/**
 * The session's presence as the value says, then as its `livechat_presence` and `livechat_typing`
 * events say; and who is typing, for a few seconds.
 * @param {number | null} sessionId @param {unknown} value
 */
function useVisitorPresence(sessionId, value) {
  const [online, setOnline] = useState(Boolean(value));
  const [typing, setTyping] = useState(/** @type {string | null} */ (null));
  useEffect(() => setOnline(Boolean(value)), [value]);

  useEffect(() => {
    if (sessionId === null) return;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const ours = (/** @type {Record<string, any>} */ data) => data.session_id === sessionId;
    const offs = [
      onRealtime('livechat_presence', (data) => { if (ours(data)) setOnline(Boolean(data.online)); }),
      onRealtime('livechat_typing', (data) => {
        if (!ours(data)) return;
        setOnline(true);
        setTyping(typeof data.visitor_name === 'string' && data.visitor_name ? data.visitor_name : 'Visitor');
        clearTimeout(timer);
        timer = setTimeout(() => setTyping(null), TYPING_SHOWN_MS);
      }),
      onRealtime('livechat_message', (data) => {
        if (ours(data) && !data.message?.is_agent) {
          clearTimeout(timer);
          setTyping(null);
        }
      }),
    ];
    return () => { clearTimeout(timer); for (const off of offs) off(); };
  }, [sessionId]);
  return { online, typing };
}

/** @param {{online: boolean}} props */
function Dot({ online }) {
  return html`<span class=${`ff-presence ${online ? 'ff-presence-online' : 'ff-presence-offline'}`} aria-hidden="true"></span>`;
}

/** @param {import('fieldforge/web/client/fields/field-props.js').FieldProps} props */
export function VisitorPresenceField(props) {
  const { online } = useVisitorPresence(typeof props.record?.id === 'number' ? props.record.id : null, props.value);
  return html`<output class="ff-readonly ff-visitor-presence" ...${controlAttributes(props)} data-presence=${online ? 'online' : 'offline'}>
    <${Dot} online=${online} />${online ? 'Online' : 'Offline'}
  </output>`;
}

/** The chatter's typing line: always in the page (a live region must exist before it speaks), empty when nobody types. @param {{id: number}} props */
export function VisitorTyping({ id }) {
  const { typing } = useVisitorPresence(id, false);
  return html`<p class="ff-visitor-typing" role="status">${typing ? `${typing} is typing…` : ''}</p>`;
}

/** The list's cell: the dot and its word, live. @param {{value: unknown, record: Record<string, unknown>}} props */
function PresenceCell({ value, record }) {
  const { online } = useVisitorPresence(typeof record.id === 'number' ? record.id : null, value);
  return html`<span class="ff-visitor-presence" data-presence=${online ? 'online' : 'offline'}><${Dot} online=${online} />${online ? 'Online' : 'Offline'}</span>`;
}

/** @type {import('fieldforge/web/client/registry.js').ListCell} */
export const visitorPresenceCell = ({ value, record }) => html`<${PresenceCell} value=${value} record=${record} />`;
