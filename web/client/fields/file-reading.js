/** A chosen file as the API takes it: `{name, base64, mimetype}` (the File field's upload form). */

/**
 * @param {File} file
 * @returns {Promise<{name: string, base64: string, mimetype: string}>}
 */
export function readUpload(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result ?? '');
      resolve({ name: file.name, base64: url.slice(url.indexOf(',') + 1), mimetype: file.type || 'application/octet-stream' });
    };
    reader.onerror = () => reject(reader.error ?? new Error(`Cannot read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** Bytes of base64 text as a Blob. @param {string} base64 @param {string} [type] */
export function base64Blob(base64, type = 'application/octet-stream') {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type });
}

/** `12.3 kB`. @param {number | null | undefined} size */
export function sizeText(size) {
  if (typeof size !== 'number') return '';
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} kB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}
