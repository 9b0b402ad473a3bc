import { Model, fields } from 'fieldforge';

/**
 * An ISO 3166-1 country (spec §2.5): `code` is the alpha-2 code, `currency` the ISO 4217 currency
 * in use there, `flag` an SVG attachment (public: flags are not secret). Seeded by
 * `data/countries.ts` from maintained packages, never typed by hand.
 */
export class Country extends Model {
  static override _verbose_name = 'Country';
  static override _order_by = ['name ASC'];
  // "FR" finds France in a picker, not only "Fra…".
  static override _name_search_fields = ['name', 'code'];
  static override fields = {
    name: fields.Char({ max_length: 255, index: true, required: true }),
    currency: fields.ManyToOne('Currency', { related_name: 'countries', on_delete: 'SET NULL' }),
    code: fields.Char({ max_length: 10, description: 'ISO 3166-1 alpha-2 code' }),
    flag: fields.File({ description: 'SVG flag' }),
  };

  declare name: string;
  declare code: string | null;
  declare currency: Promise<Model | null>;
}

/**
 * A first-level subdivision of a country (spec §2.5): `code` is the full ISO 3166-2 code
 * (`FR-IDF`, `US-CA`). The seed (`data/country_states.ts`) holds, for every country, the top level
 * of the ISO 3166-2 hierarchy only — never a mix of levels.
 */
export class CountryState extends Model {
  static override _verbose_name = 'State';
  static override _order_by = ['name ASC'];
  static override _name_search_fields = ['name', 'code'];
  static override fields = {
    name: fields.Char({ max_length: 255, index: true }),
    country: fields.ManyToOne('Country', { related_name: 'states', on_delete: 'CASCADE' }),
    code: fields.Char({ max_length: 10, description: 'ISO 3166-2 code' }),
  };

  declare name: string | null;
  declare code: string | null;
  declare country: Promise<Country | null>;
}

/** A named set of countries (European Union, Eurozone…), linked through `FKCountryGroup`. */
export class CountryGroup extends Model {
  static override _verbose_name = 'Country Group';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ max_length: 255, index: true }),
    countries: fields.ManyToMany('Country', { related_name: 'groups', through: 'FKCountryGroup' }),
  };

  declare name: string | null;
  declare countries: Promise<Country[]>;
}

/** The join model of `CountryGroup.countries`: one row per (group, country) link. */
export class FKCountryGroup extends Model {
  static override _verbose_name = 'Country Group Membership';
  static override _unique_together = [['country_group', 'country']];
  static override fields = {
    country_group: fields.ManyToOne('CountryGroup', { required: true, on_delete: 'CASCADE' }),
    country: fields.ManyToOne('Country', { required: true, on_delete: 'CASCADE' }),
  };
}
