/**
 * Where to go after signing in (`?next=`): only a path of this site, never another origin — an
 * address like `//evil.example`, `/\evil.example` or `https://evil.example` would make the
 * sign-in page an open redirect. Anything else gives the shell.
 */
export const HOME = '/web';

/** @param {string | null | undefined} next @returns {string} */
export function safeNextPath(next) {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f]/.test(next)) return HOME;
  let url;
  try {
    url = new URL(next, location.origin);
  } catch {
    return HOME;
  }
  if (url.origin !== location.origin) return HOME;
  // Back to the sign-in page itself would loop.
  if (url.pathname === '/web/login') return HOME;
  return url.pathname + url.search + url.hash;
}
