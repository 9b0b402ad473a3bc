/**
 * The client's own field widgets, registered before any module's (`../registry.js`): one per
 * field type, and the arch's `widget` names `statusbar`, `priority`, `badge` and `tags`. An
 * unknown type shows as text (`Char`).
 */
import { registry } from '../registry.js';
import { BadgeField } from './badge-field.js';
import { BinaryField } from './binary-field.js';
import { BooleanField } from './boolean-field.js';
import { CharField } from './char-field.js';
import { DateField } from './date-field.js';
import { DatetimeField } from './datetime-field.js';
import { FileField } from './file-field.js';
import { JsonField } from './json-field.js';
import { Many2manyTagsField } from './many2many-tags-field.js';
import { Many2oneField } from './many2one-field.js';
import { MonetaryField } from './monetary-field.js';
import { NumberField } from './number-field.js';
import { PriorityField } from './priority-field.js';
import { SelectionField } from './selection-field.js';
import { StatusbarField } from './statusbar-field.js';
import { TextField } from './text-field.js';

registry.field('Char', CharField);
registry.field('Text', TextField);
registry.field('Boolean', BooleanField);
registry.field('Integer', NumberField);
registry.field('Float', NumberField);
registry.field('Monetary', MonetaryField);
registry.field('Date', DateField);
registry.field('Datetime', DatetimeField);
registry.field('Selection', SelectionField);
registry.field('ManyToOne', Many2oneField);
registry.field('ManyToMany', Many2manyTagsField);
registry.field('File', FileField);
registry.field('Binary', BinaryField);
registry.field('Json', JsonField);

registry.field('statusbar', StatusbarField, { types: ['ManyToOne', 'Selection'], group: true });
registry.field('priority', PriorityField, { types: ['Selection'], group: true });
// A badge is how a read-only value reads; an editable one keeps its ordinary control.
registry.field('badge', BadgeField, { readonlyOnly: true });
registry.field('tags', Many2manyTagsField, { types: ['ManyToMany'] });
