import { Model, checkPasswordRule, fields, hashPassword } from 'fieldforge';

/** A person who signs in, or the identity behind a service account (no e-mail, no password). */
export class User extends Model {
  static override _verbose_name = 'User';
  static override _order_by = ['name ASC'];
  static override _name_search_fields = ['name', 'email'];
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
    totp_enabled: fields.Boolean({ default: false, readonly: true }),
    totp_secret: fields.Char({ max_length: 255, internal: true, description: 'Sealed (AES-GCM) shared secret' }),
    totp_last_step: fields.Integer({ internal: true }),
    backup_code_hashes: fields.Json({ internal: true }),
  };

  declare email: string | null;

  calc_password(): null {
    return null;
  }

  async set_password(value: unknown): Promise<void> {
    checkPasswordRule(value, this.email);
    await this.write({ password_hash: await hashPassword(value as string) });
  }
}
