/**
 * What the composer posts as `content` (HTML, sanitised again by the server): the typed text
 * escaped, a blank line starting a new paragraph and a single line break kept as `<br>`. Also the
 * contacts still mentioned when the message goes: a mention whose `@Name` was edited away notifies
 * nobody.
 */

/** @param {string} text */
const escape = (text) => text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[c]};`);

/** @param {string} text @returns {string} */
export function messageHtml(text) {
  return text.trim().split(/\n\s*\n/).map((para) => `<p>${escape(para.trim()).replace(/\n/g, '<br>')}</p>`).join('');
}

/**
 * The ids of the picked contacts whose `@Name` is still in the text, each once.
 * @param {string} text @param {{id: number, display_name: string}[]} picked
 */
export function mentionedIds(text, picked) {
  const ids = picked.filter((c) => text.includes(`@${c.display_name}`)).map((c) => c.id);
  return [...new Set(ids)];
}
