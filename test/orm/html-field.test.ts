/**
 * `fields.Html` sanitises on every write (issue 27 item 1: scripts, event handlers, `javascript:`
 * URLs and foreign styles removed, formatting kept), checked on the sanitiser and through
 * `Message.content` written by the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sanitizedHtml } from '../../src/orm/fields/sanitized-html.js';
import { Message } from '../../modules/messaging/models/message.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

describe('the allow-list', () => {
  it.each([
    ['<p>Hi<script>alert(1)</script></p>', '<p>Hi</p>'],
    ['<img src="https://x.test/a.png" onerror="alert(1)">', '<img src="https://x.test/a.png" />'],
    ['<a href="javascript:alert(1)">x</a>', '<a rel="noopener noreferrer nofollow">x</a>'],
    ['<a href="JaVaScRiPt:alert(1)">x</a>', '<a rel="noopener noreferrer nofollow">x</a>'],
    ['<p style="position:fixed;top:0">x</p>', '<p>x</p>'],
    ['<style>body{display:none}</style><p>x</p>', '<p>x</p>'],
    ['<iframe src="https://evil.test"></iframe><p>x</p>', '<p>x</p>'],
    ['<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<img />'],
    ['<svg onload="alert(1)"><circle/></svg>ok', 'ok'],
  ])('%s → %s', (input, output) => {
    expect(sanitizedHtml(input)).toBe(output);
  });

  it('keeps formatting, lists, quotes, code and safe links (opening without a handle on the page)', () => {
    const kept = '<p><b>bold</b> <i>it</i> <u>u</u></p><ul><li>one</li></ul><blockquote>q</blockquote><pre><code>x &lt; y</code></pre>';
    expect(sanitizedHtml(kept)).toBe(kept);
    expect(sanitizedHtml('<a href="https://fieldforge.test/doc" target="_blank">doc</a>'))
      .toBe('<a href="https://fieldforge.test/doc" target="_blank" rel="noopener noreferrer nofollow">doc</a>');
    expect(sanitizedHtml('<a href="mailto:ann@x.test">mail</a>')).toBe('<a href="mailto:ann@x.test" rel="noopener noreferrer nofollow">mail</a>');
  });
});

describe('through the API', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await testDatabase('full');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a message posted with a script, a handler and a javascript: link is stored clean, and so is an update of its content', async () => {
    const id = await t.run(async () => (await ProjectTask.create({ name: 'Sanitised' })).id);
    const res = await t.api('POST', '/api/execute/ProjectTask/message_post', {
      ids: [id], request_body: { inputs: { content: '<p onclick="steal()">Hi <a href="javascript:steal()">there</a><script>steal()</script></p>' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const messageId = res.json().result.id;
    const stored = await t.run(async () => (await Message.get(messageId)).content);
    expect(stored).toBe('<p>Hi <a rel="noopener noreferrer nofollow">there</a></p>');
    const updated = await t.api('PUT', `/api/update/Message/${messageId}`, { content: '<b style="color:red">x</b><img src=x onerror=y>' });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(await t.run(async () => (await Message.get(messageId)).content)).toBe('<b>x</b><img src="x" />');
  });
});
