/**
 * What the ORM knows about one model in one database once the registry has composed it: its
 * table, bound fields, default order and declarations. Built by `registry.ts`, read everywhere.
 */
import type { Field } from './fields/field.js';
import type { ModelClass, OwnedBy, UniqueWhen } from './model.js';
import type { Registry } from './registry.js';
import type { Wizard } from './wizards.js';

export interface ModelMeta {
  readonly name: string;
  readonly table: string;
  readonly verboseName: string;
  /** Every field, generic columns included, by name. */
  readonly fields: Map<string, Field>;
  /** Default ordering entries (`['deadline ASC', 'id ASC']`). */
  readonly orderBy: readonly string[];
  /** Field whose value is the record's `display_name`, or null (then `<Verbose name> #<id>`). */
  readonly recName: string | null;
  /** Has a Boolean `active` field: lists only active records unless the filter names `active`. */
  readonly isArchivable: boolean;
  readonly uniqueTogether: readonly (readonly string[])[];
  /** `_unique_when`: uniqueness among the records whose Boolean `when` field is true. */
  readonly uniqueWhen: readonly UniqueWhen[];
  /** Methods callable through `/api/execute`. */
  readonly apiMethods: ReadonlySet<string>;
  /** `_wizards`, bound: the dialog of an API method, by method. */
  readonly wizards: ReadonlyMap<string, Wizard>;
  /** `_ui_effects`: the effect method run on a form's draft when a field changes, by field. */
  readonly uiEffects: ReadonlyMap<string, string>;
  /** Fields matched by `name_search` terms. */
  readonly nameSearchFields: readonly string[];
  /** `_owned_by`: the fields naming each record's owner, whose readability the record's follows. */
  readonly ownedBy: OwnedBy | null;
  /** The module that declared the model. */
  readonly module: string;
  /** The composed class of this database. */
  readonly cls: ModelClass;
  readonly registry: Registry;
}
