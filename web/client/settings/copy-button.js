/**
 * A button that copies a text to the clipboard and says so (its label turns to "Copied", and a
 * toast for screen readers). Where the Clipboard API is refused (an insecure origin, a denied
 * permission) it falls back to selecting a hidden text area and the browser's copy command; if
 * both fail it says so instead of pretending.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';

/** @param {string} text @returns {Promise<boolean>} */
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'ff-visually-hidden';
    document.body.append(area);
    area.select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    area.remove();
    return copied;
  }
}

/** @param {{text: string, label?: string, what?: string}} props `what` names the text in the notice ("API key") */
export function CopyButton({ text, label = 'Copy', what = 'Text' }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return undefined;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);

  const copy = async () => {
    if (await copyText(text)) {
      setCopied(true);
      window.fieldforge?.toast.show({ type: 'success', message: `${what} copied to the clipboard.` });
    } else {
      window.fieldforge?.toast.show({ type: 'error', message: 'The browser did not allow copying: select the text and copy it yourself.' });
    }
  };
  return html`<button type="button" class="ff-button" onClick=${copy}>${copied ? 'Copied' : label}</button>`;
}
