/**
 * TOTP against an independent implementation: every expected code comes from Debian's `oathtool`
 * (or RFC 6238's published vectors), never from the code under test.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { generateTotpSecret, matchTotp, totpCode, totpQrSvg, totpUri } from '../../src/auth/totp.js';

// Counts constant-time comparisons, to prove the window is scanned to the end after a match
// (vi.mock is hoisted above the imports, so totp.ts sees the wrapper).
const { timingSafeEqualCalls } = vi.hoisted(() => ({ timingSafeEqualCalls: { count: 0 } }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      timingSafeEqualCalls.count++;
      return actual.timingSafeEqual(a, b);
    },
  };
});

const run = promisify(execFile);

/** `oathtool`'s TOTP code (SHA-1, 6 digits, 30 s) for `secret` at `at`. */
async function oathtool(secret: string, at: Date): Promise<string> {
  if (at.getUTCMilliseconds() !== 0) throw new Error('oathtool takes whole seconds');
  const now = at.toISOString().replace('T', ' ').replace('.000Z', ' UTC');
  const { stdout } = await run('/usr/bin/oathtool', ['--totp', '--base32', secret, '--now', now]);
  const code = stdout.trim();
  expect(code).toMatch(/^\d{6}$/);
  return code;
}

const seconds = (s: number): Date => new Date(s * 1000);

/** A fixed secret, so the window tests are deterministic (no chance collision between steps). */
const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** The middle of step 56 666 667 (2023-11-14): T = step × 30 + 15. */
const STEP = 56_666_667;
const AT = seconds(STEP * 30 + 15);

describe('totpCode', () => {
  const moments: [string, Date][] = [
    ['t = 0 s', seconds(0)],
    ['t = 29 s (last second of step 0)', seconds(29)],
    ['t = 30 s (first second of step 1)', seconds(30)],
    ['t = 59 s', seconds(59)],
    ['t = 60 s', seconds(60)],
    ['now-ish (2023-11-14)', AT],
    ['past the 32-bit time_t limit (2038-01-19 03:14:08)', seconds(2 ** 31)],
    ['far future (2999-12-31 23:59:59)', new Date('2999-12-31T23:59:59Z')],
  ];

  it.each(moments)('equals oathtool at %s', async (_label, at) => {
    expect(totpCode(SECRET, at)).toBe(await oathtool(SECRET, at));
  });

  it('equals oathtool for freshly generated secrets at the current time', async () => {
    for (let i = 0; i < 3; i++) {
      const secret = generateTotpSecret();
      const at = seconds(Math.floor(Date.now() / 1000));
      expect(totpCode(secret, at)).toBe(await oathtool(secret, at));
    }
  });

  it('reproduces the RFC 6238 SHA-1 vectors (last 6 digits), leading zero kept', () => {
    const rfcSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // ASCII "12345678901234567890"
    expect(totpCode(rfcSecret, seconds(59))).toBe('287082');
    expect(totpCode(rfcSecret, seconds(1111111109))).toBe('081804');
    expect(totpCode(rfcSecret, seconds(1234567890))).toBe('005924');
    expect(totpCode(rfcSecret, seconds(20000000000))).toBe('353130');
  });

  it('changes exactly at the step boundary', () => {
    expect(totpCode(SECRET, seconds(29))).toBe(totpCode(SECRET, seconds(0)));
    expect(totpCode(SECRET, seconds(30))).not.toBe(totpCode(SECRET, seconds(29)));
  });

  it('refuses a secret that is not base32 or shorter than 128 bits', () => {
    expect(() => totpCode('not base32!', AT)).toThrow();
    expect(() => totpCode('JBSWY3DPEHPK3PXP', AT)).toThrow(/128 bits/); // 80 bits
  });
});

describe('generateTotpSecret', () => {
  it('returns 160 random bits in base32', () => {
    const secrets = new Set(Array.from({ length: 20 }, generateTotpSecret));
    expect(secrets.size).toBe(20);
    for (const secret of secrets) expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 32 × 5 bits = 160 bits
  });
});

describe('matchTotp', () => {
  /** oathtool's code for the step `offset` steps away from STEP. */
  const codeAt = (offset: number) => oathtool(SECRET, seconds((STEP + offset) * 30 + 15));

  it('accepts the codes of steps −1, 0 and +1 and returns their step', async () => {
    for (const offset of [-1, 0, 1]) {
      expect(matchTotp(SECRET, await codeAt(offset), { at: AT })).toBe(STEP + offset);
    }
  });

  it('refuses the codes of steps −2 and +2', async () => {
    for (const offset of [-2, 2]) {
      const code = await codeAt(offset);
      // Guard: the fixed secret has no accidental collision inside the window.
      for (const inside of [-1, 0, 1]) expect(code).not.toBe(await codeAt(inside));
      expect(matchTotp(SECRET, code, { at: AT })).toBeNull();
    }
  });

  it('accepts the previous step’s code in the first second of a step, not the one before', async () => {
    const boundary = seconds(STEP * 30);
    expect(matchTotp(SECRET, await oathtool(SECRET, seconds(STEP * 30 - 1)), { at: boundary })).toBe(STEP - 1);
    expect(matchTotp(SECRET, await oathtool(SECRET, seconds(STEP * 30 - 31)), { at: boundary })).toBeNull();
  });

  it('uses the current time by default', async () => {
    const now = seconds(Math.floor(Date.now() / 1000));
    const step = Math.floor(now.getTime() / 30_000);
    // Whichever step the clock is in when matchTotp runs, this code is within one step of it.
    expect(matchTotp(SECRET, await oathtool(SECRET, now))).toBe(step);
  });

  it('refuses a replayed code and any code not after the last used step', async () => {
    const current = await codeAt(0);
    expect(matchTotp(SECRET, current, { at: AT, lastUsedStep: null })).toBe(STEP);
    expect(matchTotp(SECRET, current, { at: AT, lastUsedStep: STEP - 1 })).toBe(STEP);
    expect(matchTotp(SECRET, current, { at: AT, lastUsedStep: STEP })).toBeNull(); // replay
    expect(matchTotp(SECRET, current, { at: AT, lastUsedStep: STEP + 1 })).toBeNull(); // older than the last
    expect(matchTotp(SECRET, await codeAt(-1), { at: AT, lastUsedStep: STEP })).toBeNull();
    expect(matchTotp(SECRET, await codeAt(1), { at: AT, lastUsedStep: STEP })).toBe(STEP + 1);
  });

  it('tolerates surrounding spaces', async () => {
    const code = await codeAt(0);
    expect(matchTotp(SECRET, ` ${code}  `, { at: AT })).toBe(STEP);
    expect(matchTotp(SECRET, `\t${code}\n`, { at: AT })).toBe(STEP);
  });

  it('refuses malformed input without throwing', async () => {
    const code = await codeAt(0);
    const malformed: unknown[] = [
      code.slice(0, 5), // 5 digits
      `${code}0`, `0${code}`, // 7 digits
      `${code.slice(0, 3)} ${code.slice(3)}`, // inner space
      `${code.slice(0, 5)}a`, 'abcdef', '', '      ',
      [...code].map((d) => String.fromCharCode(0xff10 + Number(d))).join(''), // full-width digits
      Number(code), null, undefined, {}, [code], { toString: () => code },
    ];
    for (const input of malformed) expect(matchTotp(SECRET, input, { at: AT })).toBeNull();
  });

  it('compares against every step of the window even after a match', async () => {
    const code = await codeAt(1);
    timingSafeEqualCalls.count = 0;
    expect(matchTotp(SECRET, code, { at: AT })).toBe(STEP + 1);
    expect(timingSafeEqualCalls.count).toBe(3);
    timingSafeEqualCalls.count = 0;
    expect(matchTotp(SECRET, code, { at: AT, lastUsedStep: STEP + 1 })).toBeNull();
    expect(timingSafeEqualCalls.count).toBe(3);
  });
});

describe('totpUri', () => {
  it('carries the issuer, label, secret, algorithm, digits and period', () => {
    const uri = totpUri(SECRET, { issuer: 'Field Forge', label: 'alice@example.com' });
    const url = new URL(uri);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Field Forge:alice@example.com');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      issuer: 'Field Forge', secret: SECRET, algorithm: 'SHA1', digits: '6', period: '30',
    });
  });

  it('escapes a colon in the label, so the issuer prefix stays unambiguous', () => {
    const url = new URL(totpUri(SECRET, { issuer: 'Acme', label: 'a:b' }));
    expect(url.pathname).toBe('/Acme:a%3Ab');
  });
});

describe('totpQrSvg', () => {
  it('renders an SVG with a path, different for different URIs', async () => {
    const uri = totpUri(SECRET, { issuer: 'Field Forge', label: 'alice@example.com' });
    const svg = await totpQrSvg(uri);
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg.trimEnd()).toMatch(/<\/svg>$/);
    expect(svg).toMatch(/<path [^>]*d="M/);
    expect(await totpQrSvg(totpUri(SECRET, { issuer: 'Field Forge', label: 'bob@example.com' }))).not.toBe(svg);
  });
});
