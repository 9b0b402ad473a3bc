import { Model, QuerySet, UserError, ValidationError, checkPasswordRule, currentEnv, fields, hashPassword, withEnv } from 'fieldforge';
import type { ModelChange } from 'fieldforge';
import { SOURCE_LANGUAGE, activeLanguages } from '../../../src/i18n/translations.js';
import { assertRight } from '../../../src/access/record-access.js';

/**
 * A person who signs in, or the identity behind a service account (no e-mail, no password).
 *
 * `lang` is the code of the user's language (as Odoo's `res.users.lang`): what labels, menus and
 * formats the user gets when a request names no language (`src/i18n/translations.ts`); null is
 * `en`, the source language. Writing a code that is not an active `Language` is a
 * `ValidationError` (`_check_change`, on every path), except re-writing the value a user already
 * has: a language deactivated later stays on its users, who get the next preference meanwhile
 * (`Accept-Language`, else `en`).
 */
export class User extends Model {
  static override _verbose_name = 'User';
  static override _order_by = ['name ASC'];
  static override _name_search_fields = ['name', 'email'];
  // A user may choose their own language without the right to write User records (Odoo's
  // self-writeable preferences): POST /api/execute/User/set_my_language {inputs: {lang}}.
  // An administrator turns off the second factor of someone who lost their authenticator and
  // backup codes (the form's "Reset second factor" button, a wizard with no inputs: its dialog
  // is the confirmation). The person enrols again from their profile.
  static override _api_methods = ['set_my_language', 'action_reset_second_factor'];
  static override _wizards = {
    action_reset_second_factor: { title: 'Reset second factor', fields: {} },
  };
  static override fields = {
    name: fields.Char({ required: true }),
    email: fields.Char({ max_length: 255, index: true }),
    active: fields.Boolean({ default: true }),
    company: fields.ManyToOne('Company', { on_delete: 'RESTRICT' }),
    companies: fields.ManyToMany('Company', { label: 'Allowed companies' }),
    groups: fields.ManyToMany('Group', { related_name: 'users' }),
    is_service_account: fields.Boolean({ default: false, readonly: true }),
    password_hash: fields.Char({ max_length: 255, internal: true }),
    // Write-only: setting it checks the password rule and stores an Argon2id hash; reads give null.
    password: fields.Char({ calculate: 'calc_password', setter: 'set_password', description: 'Write-only' }),
    totp_enabled: fields.Boolean({ default: false, readonly: true, label: 'Second factor' }),
    totp_secret: fields.Char({ max_length: 255, internal: true, description: 'Sealed (AES-GCM) shared secret' }),
    totp_last_step: fields.Integer({ internal: true }),
    backup_code_hashes: fields.Json({ internal: true }),
    lang: fields.Char({ max_length: 10, label: 'Language', description: 'Code of an active language (en, fr, pt-BR); empty = en' }),
  };

  declare email: string | null;
  declare lang: string | null;

  /** `lang` must be null or the exact code of an active `Language` (see the class comment). */
  static override async _check_change(change: ModelChange): Promise<void> {
    if (change.op === 'delete') return;
    const given = change.op === 'create' ? change.vals.map((v) => v.lang) : ['lang' in change.vals ? change.vals.lang : null];
    const codes = [...new Set(given.filter((c) => c !== null && c !== undefined))];
    if (!codes.length) return;
    const active = await activeLanguages();
    for (const code of codes) {
      if (typeof code === 'string' && active.includes(code)) continue;
      if (change.op === 'write' && typeof code === 'string' && await alreadyHave(this.meta(), change.ids, code)) continue;
      const sorted = [...active].sort();
      const listed = sorted.length > 12 ? `${sorted.slice(0, 12).join(', ')}…` : sorted.join(', ');
      throw new ValidationError(
        `${JSON.stringify(code)?.slice(0, 40)} is not an active language: a user's language (lang) must be the code of an active ` +
        `Language (${listed}), or empty for ${SOURCE_LANGUAGE}`,
      );
    }
  }

  /**
   * Sets the calling user's own `lang` (null or '' for `en`), whatever their rights on User; the
   * code is checked as any write of `lang` is. A service account's key has no user to set.
   */
  static async set_my_language(inputs: Record<string, unknown> = {}): Promise<{ lang: string | null }> {
    const { uid } = currentEnv();
    if (!uid) throw new UserError('set_my_language needs a signed-in user');
    const lang = inputs.lang === '' || inputs.lang === undefined ? null : inputs.lang;
    if (lang !== null && typeof lang !== 'string') throw new ValidationError('lang must be a language code or null');
    await this._check_change({ op: 'write', ids: [uid], vals: { lang } });
    await withEnv({ su: true }, () => new QuerySet(this.meta()).filter({ id: uid }).update({ lang }));
    return { lang };
  }

  /**
   * Turns the user's second factor off (secret and backup codes erased): the next sign-in asks
   * for the password alone. Needs the write right on User
   * (administrators'); the fields themselves are the platform's, written elevated.
   */
  async action_reset_second_factor(): Promise<{ totp_enabled: false; reload: true; close: true }> {
    const { registry } = currentEnv();
    assertRight(registry.meta('User'), 'write');
    await withEnv({ su: true }, () => new QuerySet(registry.meta('User')).with_archived().filter({ id: this.id })
      .update({ totp_enabled: false, totp_secret: null, totp_last_step: null, backup_code_hashes: null }));
    return { totp_enabled: false, reload: true, close: true };
  }

  calc_password(): null {
    return null;
  }

  async set_password(value: unknown): Promise<void> {
    checkPasswordRule(value, this.email);
    await this.write({ password_hash: await hashPassword(value as string) });
  }
}

/** Whether every user of `ids` already has `lang` (a write that changes nothing passes). */
async function alreadyHave(meta: ReturnType<typeof User.meta>, ids: readonly number[], lang: string): Promise<boolean> {
  return withEnv({ su: true }, async () => (await new QuerySet(meta).with_archived().filter({ id__in: [...ids], lang }).count()) === new Set(ids).size);
}
