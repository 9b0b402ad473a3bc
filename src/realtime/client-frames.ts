/**
 * Client → server frames on the main socket (CONTRACTS C4): parsed as JSON, never evaluated, and
 * checked for shape. A frame that is not one of these is answered with an `error` frame naming
 * what is wrong; the socket stays open.
 */

export type ClientFrame =
  | { type: 'heartbeat' }
  | { type: 'watch' | 'unwatch'; model: string; id: number };

/** Longest model name a watch may carry (model names are class names). */
const MAX_MODEL_NAME = 100;
const MODEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The frame, or the reason it is refused (for the `error` frame's `detail`). */
export function parseClientFrame(raw: string): ClientFrame | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'The frame is not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'A frame is a JSON object {type, data}' };
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (typeof type !== 'string') return { error: "A frame needs a string 'type'" };
  switch (type) {
    case 'heartbeat':
      return { type };
    case 'watch':
    case 'unwatch': {
      if (data === null || typeof data !== 'object' || Array.isArray(data)) return { error: `A '${type}' frame needs data {model, id}` };
      const { model, id } = data as { model?: unknown; id?: unknown };
      if (typeof model !== 'string' || model.length > MAX_MODEL_NAME || !MODEL_NAME.test(model)) {
        return { error: `'${type}': 'model' must be a model name` };
      }
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) return { error: `'${type}': 'id' must be a positive whole number` };
      return { type, model, id };
    }
    default:
      return { error: `Unknown frame type '${type.slice(0, 40)}'` };
  }
}
