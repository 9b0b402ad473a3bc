/**
 * Names of rendered documents: what a report's filename template gave, made safe as a file name
 * on any system (no path separators, no characters Windows refuses, no control characters, no
 * leading or trailing dots and spaces, at most 120 characters), and unique within one ZIP —
 * compared without case, since Windows and macOS would otherwise overwrite one with the other on
 * extraction: `Order S00001.pdf`, `Order S00001 (2).pdf`.
 */

const MAX_NAME_LENGTH = 120;

/** `raw` as a file name without extension; `fallback` when nothing of it is left. */
export function documentName(raw: string, fallback: string): string {
  const cleaned = raw
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
    .replace(/[/\\]/g, '-')
    .replace(/[:*?"<>|]/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+|[.\s]+$/g, '');
  const name = [...cleaned].slice(0, MAX_NAME_LENGTH).join('').trim();
  return name || (fallback === raw ? 'document' : documentName(fallback, 'document'));
}

/** `<name>.<extension>` for each name, numbered ` (2)`, ` (3)`… where one repeats (ignoring case). */
export function uniqueFileNames(names: readonly string[], extension: string): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    let candidate = `${name}.${extension}`;
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${name} (${n}).${extension}`;
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
