import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  BACKUP_CODE_ALPHABET,
  generateBackupCodes,
  matchBackupCode,
  normalizeBackupCode,
} from '../../src/auth/backup-codes.js';

// Counts hash verifications, to prove every unused hash is checked whatever matched
// (vi.mock is hoisted above the imports, so backup-codes.ts sees the wrapper).
const { verifyCalls } = vi.hoisted(() => ({ verifyCalls: { count: 0 } }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@node-rs/argon2')>();
  return {
    ...actual,
    verify: (...args: Parameters<typeof actual.verify>) => {
      verifyCalls.count++;
      return actual.verify(...args);
    },
  };
});

// Lets a test choose the random bytes (real ones when the queue is empty).
const { randomQueue } = vi.hoisted(() => ({ randomQueue: [] as number[] }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    randomBytes: (size: number) => (randomQueue.length > 0 ? Buffer.from(randomQueue.splice(0, size)) : actual.randomBytes(size)),
  };
});

const CODE_FORMAT = /^[A-Z2-9]{4}-[A-Z2-9]{4}$/;

let codes: string[];
let hashes: string[];
beforeAll(async () => {
  ({ codes, hashes } = await generateBackupCodes());
});

describe('generateBackupCodes', () => {
  it('returns ten distinct XXXX-XXXX codes without ambiguous characters', () => {
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) {
      expect(code).toMatch(CODE_FORMAT);
      expect(code).not.toMatch(/[01OIL]/);
    }
  });

  it('uses an alphabet of 31 unambiguous symbols', () => {
    expect(BACKUP_CODE_ALPHABET).toHaveLength(31);
    expect(new Set(BACKUP_CODE_ALPHABET).size).toBe(31);
    expect(BACKUP_CODE_ALPHABET).toMatch(/^[A-HJKMNP-Z2-9]+$/);
  });

  it('returns one Argon2id hash per code, never containing the code', () => {
    expect(hashes).toHaveLength(codes.length);
    expect(new Set(hashes).size).toBe(hashes.length);
    hashes.forEach((hash, index) => {
      expect(hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
      const code = codes[index]!;
      for (const form of [code, code.replace('-', ''), code.toLowerCase()]) expect(hash).not.toContain(form);
    });
  });

  it('redraws bytes at or above 248 (8 × 31) instead of folding them onto the alphabet', async () => {
    // 248 and 255 would map to 'A' and 'H' under a plain modulo; 247 is the last byte kept (→ '9').
    randomQueue.push(255, 248, 0, 1, 2, 3, 4, 5, /* next draw */ 247, 30, 0, 0, 0, 0, 0, 0);
    const { codes: [code] } = await generateBackupCodes(1);
    expect(randomQueue).toEqual([]);
    expect(code).toBe('ABCD-EF99');
  });

  it('honours the count', async () => {
    const few = await generateBackupCodes(2);
    expect(few.codes).toHaveLength(2);
    expect(few.hashes).toHaveLength(2);
  });
});

describe('normalizeBackupCode', () => {
  it('canonicalises case, surrounding spaces and a missing hyphen', () => {
    expect(normalizeBackupCode('ABCD-EFGH')).toBe('ABCD-EFGH');
    expect(normalizeBackupCode('abcd-efgh')).toBe('ABCD-EFGH');
    expect(normalizeBackupCode('  abCDefGH \n')).toBe('ABCD-EFGH');
    expect(normalizeBackupCode('2345-6789')).toBe('2345-6789');
  });

  it('returns null for anything that cannot be a code', () => {
    const garbage: unknown[] = [
      null, undefined, 12345678, {}, ['ABCD-EFGH'], '', '   ',
      'ABCD-EFG', 'ABCD-EFGHJ', 'ABCDEFG', 'ABCDEFGHJ', 'ABCD--EFGH', 'AB-CDEFGH', 'ABCD EFGH', '-ABCDEFGH',
      'ABCD-EFG0', 'ABCD-EFG1', 'ABCD-EFGO', 'ABCD-EFGI', 'ABCD-EFGL', 'abcd-efgl', // ambiguous characters
      'ABCD-EFG!', 'ABCD-EFGſ', 'ÀBCD-EFGH', 'ＡBCD-EFGH', // non-ASCII that upper-cases or looks alike
    ];
    for (const input of garbage) expect(normalizeBackupCode(input)).toBeNull();
  });
});

describe('matchBackupCode', () => {
  it('returns the index of the code, however it is typed', async () => {
    const code = codes[3]!;
    for (const typed of [code, code.toLowerCase(), code.replace('-', ''), `  ${code.toLowerCase().replace('-', '')} `]) {
      expect(await matchBackupCode(typed, hashes)).toBe(3);
    }
    expect(await matchBackupCode(codes[0], hashes)).toBe(0);
    expect(await matchBackupCode(codes[9], hashes)).toBe(9);
  });

  it('no longer matches a used (nulled) code, while the others still do', async () => {
    const remaining: (string | null)[] = [...hashes];
    const index = await matchBackupCode(codes[5], remaining);
    expect(index).toBe(5);
    remaining[index!] = null;
    expect(await matchBackupCode(codes[5], remaining)).toBeNull();
    expect(await matchBackupCode(codes[6], remaining)).toBe(6);
  });

  it('returns null for a wrong code and for garbage', async () => {
    const wrong = ['ABCD-EFGH', 'HGFE-DCBA'].find((candidate) => !codes.includes(candidate))!;
    expect(await matchBackupCode(wrong, hashes)).toBeNull();
    for (const input of [null, undefined, 42, '', 'not a code', `${codes[0]}X`, { code: codes[0] }]) {
      expect(await matchBackupCode(input, hashes)).toBeNull();
    }
    expect(await matchBackupCode(codes[0], [])).toBeNull();
    expect(await matchBackupCode(codes[0], hashes.map(() => null))).toBeNull();
  });

  it('treats a malformed stored hash as no match instead of throwing', async () => {
    expect(await matchBackupCode(codes[1], ['not-a-hash', hashes[1]!])).toBe(1);
  });

  it('verifies every unused hash, wherever the code matched', async () => {
    const remaining: (string | null)[] = [...hashes];
    remaining[7] = null;
    verifyCalls.count = 0;
    expect(await matchBackupCode(codes[0], remaining)).toBe(0);
    expect(verifyCalls.count).toBe(9);
    verifyCalls.count = 0;
    expect(await matchBackupCode(codes[9], remaining)).toBe(9);
    expect(verifyCalls.count).toBe(9);
  });
});
