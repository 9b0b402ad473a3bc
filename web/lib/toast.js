/**
 * Toasts (spec §4.11): `toast.success|error|warning|info|neutral(message, title?)` and
 * `toast.show({type, title, message, duration})`, each returning `{close}`. A toast stays for its
 * intent's time (success 4 s, error 8 s, warning 6 s, info 5 s, neutral 4 s) unless `duration`
 * (milliseconds) says otherwise; `duration: 0` keeps it until dismissed. The timer pauses while
 * the pointer is over the toast or focus is in it, so nobody loses a message they are reading.
 * Errors are `role="alert"`, the others `role="status"`. Text is always text, never markup.
 * A page raises one on arrival with `notify_title`, `notify_message` and `notify_color`
 * (`green` success, `orange` warning, `red` error, `blue` info, `gray` neutral) in its query;
 * they are then removed from the address with `history.replaceState`.
 */

/** How long each intent stays, milliseconds (spec §4.11's table, in seconds there). */
export const DURATIONS = Object.freeze({ success: 4000, error: 8000, warning: 6000, info: 5000, neutral: 4000 });
const COLORS = Object.freeze({ green: 'success', orange: 'warning', red: 'error', blue: 'info', gray: 'neutral' });
const NOTIFY_PARAMS = ['notify_title', 'notify_message', 'notify_color'];

/** @typedef {'success' | 'error' | 'warning' | 'info' | 'neutral'} Intent */
/** @typedef {{type?: Intent, title?: string, message?: string, duration?: number}} ToastOptions */

/** @type {HTMLElement | null} */
let region = null;

function container() {
  if (!region || !region.isConnected) {
    region = document.createElement('section');
    region.className = 'ff-toasts';
    region.setAttribute('aria-label', 'Notifications');
    document.body.append(region);
  }
  return region;
}

/**
 * Shows a toast and returns `{close}`.
 * Example: `toast.show({type: 'warning', title: 'Heads up', message: 'Saved as draft', duration: 0})`.
 * @param {ToastOptions} [options]
 * @returns {{close: () => void}}
 */
export function show(options = {}) {
  let type = /** @type {Intent} */ (options.type ?? 'neutral');
  if (!Object.hasOwn(DURATIONS, type)) {
    console.warn(`FieldForge: unknown toast type '${String(type)}', shown as neutral`);
    type = 'neutral';
  }
  const requested = options.duration;
  const duration = typeof requested === 'number' && Number.isFinite(requested) && requested >= 0 ? requested : DURATIONS[type];

  const element = document.createElement('div');
  element.className = `ff-toast ff-toast--${type}`;
  element.dataset.intent = type;
  element.setAttribute('role', type === 'error' ? 'alert' : 'status');
  element.setAttribute('aria-atomic', 'true');
  const text = document.createElement('div');
  text.className = 'ff-toast__text';
  if (options.title) {
    const title = document.createElement('strong');
    title.className = 'ff-toast__title';
    title.textContent = String(options.title);
    text.append(title);
  }
  if (options.message !== undefined && options.message !== null && options.message !== '') {
    const message = document.createElement('p');
    message.className = 'ff-toast__message';
    message.textContent = String(options.message);
    text.append(message);
  }
  const dismiss = document.createElement('button');
  dismiss.type = 'button';
  dismiss.className = 'ff-toast__close';
  dismiss.setAttribute('aria-label', 'Dismiss notification');
  dismiss.textContent = '×';
  element.append(text, dismiss);

  let closed = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let remaining = duration;
  let startedAt = 0;
  let hovered = false;
  let focused = false;

  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    element.remove();
  };
  const run = () => {
    if (closed || duration === 0 || hovered || focused || timer !== undefined) return;
    startedAt = Date.now();
    timer = setTimeout(close, remaining);
  };
  const pause = () => {
    if (timer === undefined) return;
    clearTimeout(timer);
    timer = undefined;
    remaining = Math.max(0, remaining - (Date.now() - startedAt));
  };
  dismiss.addEventListener('click', close);
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') close();
  });
  element.addEventListener('mouseenter', () => { hovered = true; pause(); });
  element.addEventListener('mouseleave', () => { hovered = false; run(); });
  element.addEventListener('focusin', () => { focused = true; pause(); });
  element.addEventListener('focusout', (event) => {
    if (event.relatedTarget instanceof Node && element.contains(event.relatedTarget)) return;
    focused = false;
    run();
  });

  container().append(element);
  run();
  return { close };
}

/** @param {Intent} type */
const intent = (type) => (/** @type {string} */ message, /** @type {string} [title] */ title) => show({ type, message, title });

export const toast = Object.freeze({
  show,
  success: intent('success'),
  error: intent('error'),
  warning: intent('warning'),
  info: intent('info'),
  neutral: intent('neutral'),
});

/** Shows the toast the address asks for (`notify_*`), then removes those parameters from it. */
export function showArrivalToast() {
  const params = new URLSearchParams(location.search);
  if (!NOTIFY_PARAMS.some((name) => params.has(name))) return;
  const title = params.get('notify_title') ?? '';
  const message = params.get('notify_message') ?? '';
  const color = (params.get('notify_color') ?? '').trim().toLowerCase();
  const type = /** @type {Intent} */ (Object.hasOwn(COLORS, color) ? COLORS[/** @type {keyof typeof COLORS} */ (color)] : 'neutral');
  if (title || message) show({ type, title: title || undefined, message });
  // The other parameters stay exactly as written (URLSearchParams would re-encode them).
  const kept = location.search.slice(1).split('&').filter((part) => {
    if (!part) return false;
    const name = part.split('=')[0] ?? '';
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch { /* a malformed escape is kept as written */ }
    return !NOTIFY_PARAMS.includes(decoded);
  });
  history.replaceState(history.state, '', `${location.pathname}${kept.length ? `?${kept.join('&')}` : ''}${location.hash}`);
}
