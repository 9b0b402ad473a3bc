/**
 * Steps the browser tests of forms share: the record id the address gets once a form is saved,
 * picking an option of an autocomplete, and reading a record back through the API.
 */
import { expect } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { TestDatabase } from '../support/test-database.js';

/** The record id in the address once the form has one (else the page's alerts, to say why not). */
export async function hashId(page: Page): Promise<number> {
  try {
    await page.waitForFunction(() => /[#&]id=\d+/.test(location.hash), undefined, { timeout: 15_000 });
  } catch (err) {
    throw new Error(`no id in the address; the page says: ${(await page.getByRole('alert').allInnerTexts()).join(' | ')}`, { cause: err });
  }
  return Number(/[#&]id=(\d+)/.exec(await page.evaluate(() => location.hash))![1]);
}

/** Types into the combobox named `label` inside `scope` and picks the option `option`. */
export async function pick(scope: Page | Locator, label: string, typed: string, option: string | RegExp): Promise<void> {
  await scope.getByRole('combobox', { name: label }).fill(typed);
  const page = 'page' in scope ? scope.page() : scope;
  const choice = page.getByRole('option', { name: option });
  await choice.waitFor();
  await choice.click();
}

/** The record as the administrator's API fetch answers it. */
export async function readRecord(t: TestDatabase, model: string, id: number, fields: string[]): Promise<Record<string, any>> {
  const res = await t.api('POST', `/api/fetch/${model}/${id}`, { fields });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
