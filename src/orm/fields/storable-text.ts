/**
 * What a PostgreSQL text value cannot hold. PostgreSQL refuses the NUL character (its own error
 * names no field) and silently stores a lone UTF-16 surrogate — half of an emoji, cut by a
 * careless client — as U+FFFD, so the value read back is not the value written. Text-holding
 * fields refuse both up front, naming themselves; filters refuse them too, so a comparison never
 * depends on what the driver would have substituted.
 */

// `u` mode reads a well-formed surrogate pair as one code point, so only a lone half matches.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What in `text` cannot be stored (`the NUL character (\\u0000)`, `a lone surrogate \\ud800 at UTF-16
 * offset 3 (half of a character)`), or null when all of it can.
 */
export function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'the NUL character (\\u0000)';
  const lone = LONE_SURROGATE.exec(text);
  if (lone) return `a lone surrogate \\u${lone[0].charCodeAt(0).toString(16)} at UTF-16 offset ${lone.index} (half of a character)`;
  return null;
}

/**
 * How many characters (code points, as PostgreSQL counts them) `text` has when that is more than
 * `limit`, else null. Counting code points takes a pass over the text; it is only done when the
 * UTF-16 length says the limit may be exceeded.
 */
export function charactersBeyond(text: string, limit: number): number | null {
  if (text.length <= limit) return null;
  let count = 0;
  for (const _ of text) count++;
  return count > limit ? count : null;
}
