/**
 * Lays out a Form arch: `row`s are 12-column grids, a `column` spans `span` of them (full width on
 * a narrow screen), and a `field` node is drawn by `renderField`. Fields the arch names but the
 * registry does not know, or whose `visible_setting` does not hold, take no room.
 */
import { html } from '../../../lib/html.js';

/**
 * @typedef {{field?: {name: string, properties?: Record<string, any>}, row?: ArchNode[], column?: {span?: number, children?: ArchNode[]}}} ArchNode
 */

/**
 * @param {{arch: ArchNode[], renderField: (name: string, properties: Record<string, any>, span: number) => any}} props
 */
export function FormLayout({ arch, renderField }) {
  return html`<div class="ff-form-sheet">${arch.map((node, i) => layoutNode(node, renderField, 12, i))}</div>`;
}

/**
 * @param {ArchNode} node
 * @param {(name: string, properties: Record<string, any>, span: number) => any} renderField
 * @param {number} span the width the node gets, in twelfths
 * @param {number} key
 */
function layoutNode(node, renderField, span, key) {
  if (node.field) return html`<div key=${key} class="ff-form-cell" style=${`--ff-span: ${span}`}>${renderField(node.field.name, node.field.properties ?? {}, span)}</div>`;
  if (node.row) {
    const children = node.row;
    const fieldsOnly = children.every((c) => c.field);
    const each = fieldsOnly ? Math.max(1, Math.floor(12 / Math.max(1, children.length))) : 12;
    return html`<div key=${key} class="ff-form-row">${children.map((child, i) => layoutNode(child, renderField, child.column ? child.column.span ?? 12 : each, i))}</div>`;
  }
  if (node.column) {
    const width = Math.min(12, Math.max(1, node.column.span ?? 12));
    return html`<div key=${key} class="ff-form-column" style=${`--ff-span: ${width}`}>${(node.column.children ?? []).map((child, i) => layoutNode(child, renderField, 12, i))}</div>`;
  }
  return null;
}

/** Every field name an arch mentions, in order. @param {ArchNode[]} arch @returns {{name: string, properties: Record<string, any>}[]} */
export function archFields(arch) {
  /** @type {{name: string, properties: Record<string, any>}[]} */
  const found = [];
  /** @param {ArchNode[]} nodes */
  const walk = (nodes) => {
    for (const node of nodes) {
      if (node.field) found.push({ name: node.field.name, properties: node.field.properties ?? {} });
      if (node.row) walk(node.row);
      if (node.column) walk(node.column.children ?? []);
    }
  };
  walk(arch);
  return found;
}
