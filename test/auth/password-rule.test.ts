/**
 * The password rule, each part both ways: a string of 12 to 1024 code points, not a common password
 * (in any case), and not the e-mail address or its local part. A refusal is a ValidationError (400)
 * with the exact message.
 */
import { describe, expect, it } from 'vitest';
import { checkPasswordRule, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../src/auth/password-rule.js';
import { ValidationError } from '../../src/errors.js';

const NOT_A_STRING = 'Password must be a string.';
const TOO_SHORT = 'Password must be at least 12 characters long.';
const TOO_LONG = 'Password must be at most 1024 characters long.';
const COMMON = 'Password is too common; choose one that is harder to guess.';
const IS_EMAIL = 'Password must not be the e-mail address, nor the part of it before the @.';

function refusal(password: unknown, email?: string | null): ValidationError {
  try {
    checkPasswordRule(password, email);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(400);
    return err as ValidationError;
  }
  throw new Error(`expected ${JSON.stringify(password)?.slice(0, 40)} to be refused`);
}

function expectRefused(password: unknown, message: string, email?: string | null) {
  expect(refusal(password, email).message).toBe(message);
}

function expectAccepted(password: string, email?: string | null) {
  expect(() => checkPasswordRule(password, email)).not.toThrow();
}

describe('checkPasswordRule', () => {
  it('exports the bounds', () => {
    expect(MIN_PASSWORD_LENGTH).toBe(12);
    expect(MAX_PASSWORD_LENGTH).toBe(1024);
  });

  it('refuses anything but a string', () => {
    for (const value of [undefined, null, 123456789012345, true, ['long enough password'], { password: 'long enough password' }]) {
      expectRefused(value, NOT_A_STRING);
    }
    expectAccepted('long enough password');
  });

  it('needs at least 12 characters', () => {
    expectRefused('', TOO_SHORT);
    expectRefused('k7#vQ9!mZ2p', TOO_SHORT); // 11
    expectAccepted('k7#vQ9!mZ2pX'); // 12
  });

  it('counts code points, not UTF-16 units', () => {
    const emoji = '\u{1F510}'; // 🔐, two UTF-16 units
    expect(emoji.repeat(11).length).toBe(22);
    expectRefused(emoji.repeat(11), TOO_SHORT);
    expectAccepted(emoji.repeat(12));
    expectAccepted('\u{1F510}\u{1F30A}\u{1F9ED}\u{1F3B2}\u{1F9E9}\u{1F680}\u{1F344}\u{1F3BB}\u{1F6F8}\u{1F9CA}\u{1F98E}\u{1F36F}');
    // The upper bound counts the same way: 1024 emoji are 2048 units and still allowed.
    expectAccepted(emoji.repeat(MAX_PASSWORD_LENGTH));
    expectRefused(emoji.repeat(MAX_PASSWORD_LENGTH + 1), TOO_LONG);
  });

  it('allows at most 1024 characters', () => {
    expectAccepted('x7'.repeat(512));
    expectRefused(`${'x7'.repeat(512)}!`, TOO_LONG);
    expectRefused('a'.repeat(10_000_000), TOO_LONG);
  });

  it('refuses common passwords whatever their case', () => {
    expectRefused('qwerty123456', COMMON);
    expectRefused('QwErTy123456', COMMON);
    expectRefused('LeaveMeAlone', COMMON);
    expectRefused('1Q2W3E4R5T6Y', COMMON);
    expectAccepted('qwerty123456x');
    expectAccepted('LeaveMeAlone, please');
  });

  it('refuses the e-mail address and its local part, trimmed and in any case', () => {
    const email = '  Jane.Doe.Example@Example.COM ';
    expectRefused('jane.doe.example@example.com', IS_EMAIL, email);
    expectRefused('JANE.DOE.EXAMPLE@EXAMPLE.COM', IS_EMAIL, email);
    expectRefused(' jane.doe.example@example.com ', IS_EMAIL, email);
    expectRefused('jane.doe.example', IS_EMAIL, email);
    expectRefused('Jane.Doe.Example', IS_EMAIL, email);
    // Containing them, or without an e-mail to compare with, is fine.
    expectAccepted('jane.doe.example!', email);
    expectAccepted('jane.doe.example@example.com.au', email);
    expectAccepted('jane.doe.example');
    expectAccepted('jane.doe.example', null);
    expectAccepted('jane.doe.example', '   ');
  });

  it('uses the part before the last @ as the local part', () => {
    expectRefused('"odd@local"part', IS_EMAIL, '"odd@local"part@example.com');
    expectAccepted('"odd@local"part@example', '"odd@local"part@example.com');
  });
});
