/**
 * The component registry and the mounting of `[data-component]` elements (spec §4.11, C2).
 *
 * An element `<div data-component="Name" data-props='{"a": 1}'>` is mounted once: its props are
 * parsed, and the component registered under `Name` renders into it (its previous content is
 * replaced). Elements present when the document is parsed, elements added later (a
 * MutationObserver) and elements waiting for a component registered later are all mounted.
 * Bad props (not a JSON object) leave that element empty and log a console error naming it;
 * the others mount. A component that throws while rendering is contained the same way.
 * An element unmounted by the function `mount` returned is not mounted again by itself; an
 * element removed from the document is unmounted (its effects clean up) and mounts again if it
 * comes back.
 */
import { Component, createContext, h, render } from 'preact';

/** The element a component was mounted into (null when it is rendered by another component). */
export const MountHost = createContext(/** @type {Element | null} */ (null));

/** @typedef {(props: Record<string, any>) => import('preact').ComponentChildren} ComponentFunction */
/** @typedef {{status: 'waiting' | 'mounted' | 'unmounted' | 'failed', props: Record<string, unknown> | null, unmount: () => void}} Mounting */

/** @type {Map<string, ComponentFunction>} */
const components = new Map();
/** @type {WeakMap<Element, Mounting>} */
const mountings = new WeakMap();
let watching = false;

export const registry = Object.freeze({
  /**
   * Registers a component under `name` and mounts the elements waiting for it.
   * Example: `registry.component('Hello', ({who}) => html\`<p>Hello ${who}</p>\`)`.
   * @param {string} name
   * @param {ComponentFunction} fn
   */
  component(name, fn) {
    if (typeof name !== 'string' || !name) throw new TypeError('registry.component needs a name');
    if (typeof fn !== 'function') throw new TypeError(`registry.component('${name}') needs a function of props`);
    if (components.has(name) && components.get(name) !== fn) throw new Error(`A component named '${name}' is already registered`);
    components.set(name, fn);
    if (watching) {
      for (const element of document.querySelectorAll(`[data-component="${CSS.escape(name)}"]`)) {
        const mounting = mountings.get(element);
        if (!mounting) start(element);
        else if (mounting.status === 'waiting') renderInto(element, mounting, fn);
      }
    }
    return fn;
  },
  /** The component registered under `name`, if any. @param {string} name */
  get(name) {
    return components.get(name);
  },
});

/**
 * Mounts one element now (or as soon as its component is registered) and returns the function
 * that unmounts it. Mounting an element that is mounted or waiting returns its existing function.
 * @param {Element} element
 * @returns {() => void}
 */
export function mount(element) {
  if (!(element instanceof Element)) throw new TypeError('fieldforge.mount needs an element');
  const mounting = mountings.get(element);
  if (mounting && (mounting.status === 'mounted' || mounting.status === 'waiting')) return mounting.unmount;
  return start(element).unmount;
}

/** @param {Element} element @returns {Mounting} */
function start(element) {
  const name = element.getAttribute('data-component');
  if (!name) throw new TypeError(`fieldforge.mount: ${describe(element)} has no data-component attribute`);
  /** @type {Mounting} */
  const mounting = {
    status: 'waiting',
    props: null,
    unmount() {
      if (mounting.status === 'mounted') render(null, element);
      mounting.status = 'unmounted';
    },
  };
  mountings.set(element, mounting);
  mounting.props = readProps(element);
  if (!mounting.props) {
    mounting.status = 'failed';
    element.replaceChildren();
    return mounting;
  }
  const fn = components.get(name);
  if (fn) renderInto(element, mounting, fn);
  return mounting;
}

/** @param {Element} element @param {Mounting} mounting @param {ComponentFunction} fn */
function renderInto(element, mounting, fn) {
  mounting.status = 'mounted';
  element.replaceChildren();
  render(h(MountHost.Provider, { value: element }, h(Boundary, { host: element }, h(fn, mounting.props ?? {}))), element);
}

/** @param {Element} element @returns {Record<string, unknown> | null} */
function readProps(element) {
  const text = element.getAttribute('data-props');
  if (text === null || text.trim() === '') return {};
  let props;
  try {
    props = JSON.parse(text);
  } catch (err) {
    console.error(`FieldForge: ${describe(element)} has invalid data-props JSON (${/** @type {Error} */ (err).message}); it is not mounted`, element);
    return null;
  }
  if (props === null || typeof props !== 'object' || Array.isArray(props)) {
    console.error(`FieldForge: ${describe(element)} has data-props that are not a JSON object; it is not mounted`, element);
    return null;
  }
  return props;
}

/** A component that renders nothing once its child throws, so one broken component spares the page. */
class Boundary extends Component {
  constructor(/** @type {any} */ props) {
    super(props);
    this.state = { failed: false };
  }
  static getDerivedStateFromError() {
    return { failed: true };
  }
  componentDidCatch(/** @type {unknown} */ error) {
    console.error(`FieldForge: the component of ${describe(this.props.host)} failed`, error, this.props.host);
  }
  render() {
    return this.state.failed ? null : this.props.children;
  }
}

/** `<div id="x" data-component="Name">`: how console messages name an element. @param {Element} element */
export function describe(element) {
  const id = element.id ? ` id="${element.id}"` : '';
  return `<${element.localName}${id} data-component="${element.getAttribute('data-component') ?? ''}">`;
}

/** @param {Node} node @param {(element: Element) => void} visit */
function eachComponentElement(node, visit) {
  if (!(node instanceof Element)) return;
  if (node.hasAttribute('data-component')) visit(node);
  for (const element of node.querySelectorAll('[data-component]')) visit(element);
}

/** Mounts what the document holds now and watches for elements added or removed later. */
export function watchDocument() {
  if (watching) return;
  watching = true;
  eachComponentElement(document.documentElement, (element) => {
    if (!mountings.has(element)) start(element);
  });
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.removedNodes) {
        eachComponentElement(node, (element) => {
          const mounting = mountings.get(element);
          if (element.isConnected || !mounting) return;
          if (mounting.status === 'mounted') render(null, element);
          if (mounting.status !== 'unmounted') mountings.delete(element);
        });
      }
      const added = record.type === 'attributes' ? [record.target] : record.addedNodes;
      for (const node of added) {
        eachComponentElement(node, (element) => {
          if (element.isConnected && !mountings.has(element)) start(element);
        });
      }
    }
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-component'] });
}
