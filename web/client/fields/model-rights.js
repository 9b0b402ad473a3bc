/**
 * What the caller may do on another model (`GET /api/model-info/{model}`), read once per page:
 * a picker offers "Create …" only when the target model can be created in.
 */
import { api } from '../api.js';

/**
 * @typedef {{model: string, label: string, rec_name: string | null, create: boolean, write: boolean, unlink: boolean}} ModelRights
 */

/** @type {Map<string, Promise<ModelRights | null>>} */
const known = new Map();

/** @param {string} model @returns {Promise<ModelRights | null>} */
export function modelRights(model) {
  let pending = known.get(model);
  if (!pending) {
    pending = api.get(`/api/model-info/${encodeURIComponent(model)}`, {}).catch(() => null);
    known.set(model, pending);
  }
  return pending;
}
