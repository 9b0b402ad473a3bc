/**
 * The form and the settings dialogs place a refusal at a field only when the server names the
 * field as data (the body's `field`): a message that quotes a field is text for the person, never
 * parsed (issue 26 item 5). The modules are the browser's own files, imported as they are served.
 */
import { describe, expect, it } from 'vitest';
import { refusedField } from '../../web/client/views/form/refused-field.js';

const form = { model: 'ProjectTask', label: 'Task', names: ['name', 'stage'] };

describe('refusedField', () => {
  it('is the field the body names, when the form has it', () => {
    expect(refusedField({ status: 400, detail: 'anything', body: { field: 'name' } }, form)).toBe('name');
    expect(refusedField({ status: 400, detail: 'anything', body: { field: 'unknown' } }, form)).toBeNull();
  });

  it('reads nothing from the text: a message quoting a field names none', () => {
    expect(refusedField({ status: 400, detail: "Field 'name' of Task is required", body: {} }, form)).toBeNull();
    expect(refusedField({ status: 400, detail: "Task: 'name' must be unique; this value cannot be used" }, form)).toBeNull();
  });

  it('only a 400 is about a field', () => {
    expect(refusedField({ status: 403, detail: 'no', body: { field: 'name' } }, form)).toBeNull();
    expect(refusedField(new Error('offline'), form)).toBeNull();
  });
});
