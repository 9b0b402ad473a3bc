/**
 * Decodes uploaded file content: base64 (or base64url, or a `data:` URL), strictly — Node's own
 * decoder skips invalid characters, which would store garbage instead of refusing it — and within
 * the upload limit, checked before decoding so an oversized upload costs no memory.
 */
import { PayloadTooLarge, ValidationError } from '../errors.js';

export interface DecodedContent {
  bytes: Buffer;
  /** The media type a `data:` URL declared. */
  mimetype?: string;
}

const DATA_URL = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?((?:;[a-z0-9-]+=[^;,]*)*);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*$/;

export function decodeBase64(content: unknown, limit: number): DecodedContent {
  if (typeof content !== 'string') throw new ValidationError('File content must be a base64 string');
  let text = content;
  let mimetype: string | undefined;
  const dataUrl = DATA_URL.exec(text.slice(0, 512));
  if (dataUrl) {
    mimetype = dataUrl[1]?.toLowerCase();
    text = text.slice(dataUrl[0].length);
  }
  text = text.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  const body = text.replace(/={1,2}$/, '');
  if (!BASE64.test(body) || body.length % 4 === 1 || (text.length !== body.length && text.length % 4 !== 0)) {
    throw new ValidationError('File content is not valid base64');
  }
  const size = Math.floor((body.length * 3) / 4);
  if (size > limit) {
    throw new PayloadTooLarge(`The file is ${size} bytes, larger than the upload limit of ${limit} bytes (FF_UPLOAD_LIMIT)`);
  }
  return { bytes: Buffer.from(body, 'base64'), mimetype };
}
