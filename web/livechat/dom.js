/**
 * The widget builds its few elements by hand: it runs on pages of other sites, which have no
 * import map for the client's Preact, and it must load nothing but its own files.
 * `h('button', {type: 'button', onclick}, 'Send')`: properties starting with `on` are listeners,
 * `false`/`null` leave an attribute out, children are nodes or text.
 */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, any>} [props] @param {...(Node | string | null | false | undefined)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== false && child !== undefined) el.append(child);
  return el;
}
