/**
 * Status-code matrix (credentials and permissions issue, item 6; spec §4, §5, §7): every `/api`
 * route that exists × every way a caller can be refused, each cell asserting the exact status and
 * the `{detail, error}` body, and — once the whole matrix has run — that nothing was written.
 *
 *  - no, malformed, unknown, revoked, expired credential; deactivated service account or user;
 *    session token issued for another database → 401 `AuthenticationError`;
 *  - authenticated without the model right (ACL) → 403 `AccessError`;
 *  - a record rule hides the target record → 404 `NotFound` on record routes, a 200 without the
 *    hidden record on list routes (docs/decisions.md, Permissions).
 *
 * Each column is proven to exercise its condition (the revoked key worked before it was revoked,
 * the foreign session works on its own database, …), and a final control column sends the very
 * same requests as the administrator: each succeeds and writes, so "nothing was written" above
 * is not the result of requests that could not have written anyway. The app is a non-dev one, so
 * error bodies carry no traceback.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { verifyAccessToken } from '../../src/auth/sessions.js';
import { buildApp } from '../../src/http/app.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { User } from '../../modules/core/models/user.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { Attachment } from '../../modules/core/models/attachment.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { solvedAltcha } from '../support/altcha.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Json = any;

let t: TestDatabase;
/** A second database: the source of the "session for another database" token. */
let other: TestDatabase;
/** Non-dev app (no traceback in error bodies), low ALTCHA difficulty for the sign-ins. */
let app: FastifyInstance;

const PASSWORD = 'matrix-walrus-lantern-77';
/** Record rules of the matrix group hide every ProjectTask and ApiKey whose name starts so. */
const HIDDEN = 'Matrix hidden';
/** Groups with every right on ProjectTask and ApiKey (core.group_admin holds them). */
const ADMIN_GROUPS = ['core.group_admin', 'core.group_user'];
/** Authenticated, but no right at all on ProjectTask or ApiKey. */
const NO_ACL_GROUPS = ['core.group_user'];

const ids = {
  project: 0, openStage: 0, closedStage: 0,
  /** The record the record routes act on; hidden from the rule principals. */
  target: 0,
  targetFile: 0,
  /** The task bulk-delete removes in the control column; hidden from the rule principals too. */
  bulkVictim: 0,
  /** A visible task of another project: the parent the ui-effect column picks for the target. */
  otherProject: 0, otherParent: 0,
  /** Readable by the rule principals: shows their list answers are not simply empty. */
  visible: 0,
  /** The key DELETE /api/api-keys/:id revokes; hidden from the rule principals. */
  victimKey: 0,
  ruleGroup: 0,
  /** The API reference share DELETE /api/api-docs-shares/:id revokes. */
  share: 0,
};
let victimKey = '';

/** Authorization header of each column (undefined: no header). */
const auth: Record<string, string | undefined> = {};

// ---------------------------------------------------------------------------------------------
// Endpoints: every `/api/*` route the app registers, with a concrete request that would succeed
// (and, for writes, write) as the administrator — see the control column at the end.
// ---------------------------------------------------------------------------------------------

/** What the rule principals get: a record route answers 404; a list route 200 without the record. */
type RuleExpectation =
  | { status: 200; check: (body: Json) => void }
  | { status: 400 | 403 | 404; error: 'BadRequest' | 'AccessError' | 'NotFound' };

interface Endpoint {
  /** The route as Fastify registers it: `METHOD /path/:param`. */
  route: string;
  method: Method;
  url: () => string;
  body?: () => unknown;
  /** A multipart upload instead of a JSON body (import preview). */
  upload?: () => { payload: Buffer; contentType: string };
  underRule: RuleExpectation;
  /**
   * What a principal without the model right gets; 403 AccessError unless said otherwise (a 200
   * for routes every signed-in principal may use, whose answer the check narrows).
   */
  withoutRight?: { status: 400 | 403 | 404; error: 'BadRequest' | 'AccessError' | 'NotFound' } | { status: 200; check: (body: Json) => void };
  /** Control column: as the administrator the request succeeds; checks what it did. */
  control: (res: LightMyRequestResponse) => Promise<void>;
  /** Where a signed-in person gets another answer than an API key (marking the feed read is a person's act). */
  sessions?: { underRule: Endpoint['underRule']; withoutRight: NonNullable<Endpoint['withoutRight']> };
  /** The control column's status when not 200 (the socket route answers a plain GET 400 even to the administrator). */
  controlStatus?: number;
}

const taskNames = (rows: { name?: string; display_name?: string }[]) => rows.map((r) => r.name ?? r.display_name);

function listsVisibleNotHidden(body: Json) {
  expect(Array.isArray(body), JSON.stringify(body)).toBe(true);
  const names = taskNames(body);
  expect(names).toContain('Matrix visible task');
  expect(names.filter((n) => n?.startsWith(HIDDEN))).toEqual([]);
  expect(body.map((r: { id: number }) => r.id)).not.toContain(ids.target);
}

const NOT_FOUND = { status: 404, error: 'NotFound' } as const;
/** The progress id of the administrator's import, started before the matrix. */
const MATRIX_PROGRESS = 'matrix-progress';
/** The hidden target's deadline: what the reassign dialog proposes for it, to those who see it. */
const TARGET_DEADLINE = '2031-03-14';

const ENDPOINTS: Endpoint[] = [
  {
    route: 'POST /api/query/:model', method: 'POST',
    url: () => '/api/query/ProjectTask',
    body: () => ({ fields: ['name'], filter_str: "Q(name__startswith='Matrix')", limit: 50 }),
    underRule: { status: 200, check: listsVisibleNotHidden },
    async control(res) {
      expect(taskNames(res.json())).toContain('Matrix hidden target');
    },
  },
  {
    route: 'POST /api/fetch/:model/:id', method: 'POST',
    url: () => `/api/fetch/ProjectTask/${ids.target}`,
    body: () => ({ fields: ['name', 'stage.name'] }),
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toMatchObject({ id: ids.target, name: 'Matrix hidden target' });
    },
  },
  {
    route: 'POST /api/create/:model', method: 'POST',
    url: () => '/api/create/ProjectTask',
    body: () => ({ name: 'Matrix hidden created', project: ids.project }),
    // Not a record route: the new record fails the rule principals' create rule, and "a create
    // whose new record fails the create rules is 403 and rolled back" (decisions, Permissions).
    underRule: { status: 403, error: 'AccessError' },
    async control(res) {
      expect(res.json()).toMatchObject({ name: 'Matrix hidden created' });
      expect(await t.run(() => ProjectTask.query("Q(name='Matrix hidden created')").count())).toBe(1);
    },
  },
  {
    route: 'PUT /api/update/:model/:id', method: 'PUT',
    url: () => `/api/update/ProjectTask/${ids.target}`,
    body: () => ({ name: 'Matrix hidden target (defaced)', priority: '2' }),
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toMatchObject({ id: ids.target, name: 'Matrix hidden target (defaced)' });
    },
  },
  {
    route: 'POST /api/execute/:model/:method', method: 'POST',
    url: () => '/api/execute/ProjectTask/action_close',
    body: () => ({ ids: [ids.target], request_body: { inputs: {}, context: {} } }),
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json().result).toEqual({ stage: ids.closedStage });
      const [task] = await t.run(() => ProjectTask.query({ id: ids.target }).read(['stage']));
      expect((task!.stage as { id: number }).id).toBe(ids.closedStage);
    },
  },
  {
    route: 'GET /api/files/:id/url', method: 'GET',
    url: () => `/api/files/${ids.targetFile}/url`,
    // The file of a hidden record does not exist for the caller, like the record. Without the
    // right to read the owning model (ProjectTask) the owner is unreadable, so the file too: 404.
    underRule: NOT_FOUND,
    withoutRight: NOT_FOUND,
    async control(res) {
      expect(res.json().url).toMatch(/^\/filestore\/view\/\d+\?db=/);
    },
  },
  {
    route: 'POST /api/bulk-create/:model', method: 'POST',
    url: () => '/api/bulk-create/ProjectTask',
    body: () => [{ name: 'Matrix visible bulk', project: ids.project }, { name: 'Matrix hidden bulk created', project: ids.project }],
    // As POST /api/create: an item failing the create rule refuses the whole call, rolled back.
    underRule: { status: 403, error: 'AccessError' },
    async control(res) {
      expect(res.json().map((r: { name: string }) => r.name)).toEqual(['Matrix visible bulk', 'Matrix hidden bulk created']);
    },
  },
  {
    route: 'PUT /api/bulk-update/:model', method: 'PUT',
    url: () => '/api/bulk-update/ProjectTask',
    body: () => [{ id: ids.visible, priority: '1' }, { id: ids.target, priority: '1' }],
    // Explicit ids behave as on the record routes: one hidden id is a 404 for the whole call.
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toEqual({ updated: 2, ids: [ids.visible, ids.target] });
      const rows = await t.run(() => ProjectTask.query({ id__in: [ids.visible, ids.target] }).read(['priority']));
      expect(rows.map((r) => r.priority)).toEqual(['1', '1']);
    },
  },
  {
    route: 'DELETE /api/bulk-delete/:model', method: 'DELETE',
    url: () => '/api/bulk-delete/ProjectTask',
    body: () => [ids.bulkVictim],
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toEqual({ deleted: 1, ids: [ids.bulkVictim] });
      expect(await t.run(() => ProjectTask.query({ id: ids.bulkVictim }).with_archived().count())).toBe(0);
    },
  },
  {
    route: 'POST /api/clone/:model', method: 'POST',
    url: () => '/api/clone/ProjectTask',
    body: () => ({ ids: [ids.target] }),
    underRule: NOT_FOUND,
    async control(res) {
      const [copy] = res.json();
      expect(copy.name).toMatch(/^Matrix hidden target.* \(copy\)$/);
      expect(await t.run(() => ProjectTask.query({ id: copy.id }).count())).toBe(1);
    },
  },
  {
    route: 'POST /api/action-meta/:model/:method', method: 'POST',
    url: () => '/api/action-meta/ProjectTask/action_reassign',
    body: () => ({ context: { active_ids: [ids.target] } }),
    // Not a record route: it describes a dialog (the read right on the model suffices); the
    // defaults are read as the caller, so a hidden task lends its deadline to nobody.
    underRule: {
      status: 200,
      check(body) {
        expect(body).toMatchObject({ model: 'ProjectTask', method: 'action_reassign' });
        expect(body.defaults.deadline).toBeUndefined();
      },
    },
    async control(res) {
      expect(res.json().defaults.deadline).toBe(TARGET_DEADLINE);
    },
  },
  {
    route: 'POST /api/ui-effect/:model', method: 'POST',
    url: () => '/api/ui-effect/ProjectTask',
    body: () => ({ id: ids.target, vals: { parent: ids.otherParent }, field_name: 'parent' }),
    underRule: NOT_FOUND,
    async control(res) {
      // Nothing written (the "nothing was written" check above ran before the control column):
      // the answer is what the form would change.
      expect(res.json()).toMatchObject({ project: { id: ids.otherProject } });
      const [task] = await t.run(() => ProjectTask.query({ id: ids.target }).read(['parent']));
      expect(task!.parent).toBeNull();
    },
  },
  {
    route: 'POST /api/generate_report', method: 'POST',
    url: () => '/api/generate_report',
    body: () => ({ model: 'ProjectTask', report_id: 'project.report_project_task', instance_ids: [ids.target] }),
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    },
  },
  {
    route: 'POST /api/export/:model', method: 'POST',
    url: () => '/api/export/ProjectTask',
    body: () => ({ ids: [ids.target], fields: ['name'] }),
    // Explicit ids behave as on the record routes: a hidden one is a 404, before any byte is sent.
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      expect(res.rawPayload.subarray(0, 2).toString('latin1')).toBe('PK');
    },
  },
  {
    route: 'POST /api/import/:model', method: 'POST',
    url: () => '/api/import/ProjectTask',
    // A dry run: the matrix's "nothing was written" check must hold for the control column too.
    body: () => ({
      fields: ['id', 'priority'],
      data: [['id', 'priority'], [ids.visible, '1'], [ids.target, '1']],
      dry_run: true,
    }),
    // Matching sees only what the caller sees: the hidden task is a row error, the visible one matches.
    underRule: {
      status: 200,
      check(body) {
        expect(body, JSON.stringify(body)).toMatchObject({ dry_run: true, valid: false, summary: { would_update: 1, errors: 1 } });
        expect(body.details.errors).toEqual([expect.objectContaining({ row: 2, field: 'id' })]);
      },
    },
    async control(res) {
      expect(res.json()).toMatchObject({ dry_run: true, valid: true, success: true, summary: { would_update: 2, errors: 0 } });
    },
  },
  {
    // The realtime socket (CONTRACTS C4): a plain GET without the upgrade is a 400 for anyone
    // authenticated; refusals of the upgrade itself are proven over real sockets in test/realtime/.
    route: 'GET /api/ws', method: 'GET',
    url: () => '/api/ws',
    underRule: { status: 400, error: 'BadRequest' },
    withoutRight: { status: 400, error: 'BadRequest' },
    controlStatus: 400,
    async control(res) {
      expect(res.json()).toEqual({ detail: expect.stringContaining('Upgrade: websocket'), error: 'BadRequest' });
    },
  },
  {
    // Presence: any signed-in principal may read it; nobody is online during the matrix.
    route: 'GET /api/chat/presence', method: 'GET',
    url: () => '/api/chat/presence',
    underRule: { status: 200, check: (body) => expect(body).toEqual([]) },
    withoutRight: { status: 200, check: (body) => expect(body).toEqual([]) },
    async control(res) {
      expect(res.json()).toEqual([]);
    },
  },
  {
    // The activity feed (CONTRACTS C5): an API key reads its service account's feed (empty here);
    // marking read is a person's act, refused to every API key.
    route: 'GET /api/activity-stream/unread-count', method: 'GET',
    url: () => '/api/activity-stream/unread-count',
    underRule: { status: 200, check: (body) => expect(body).toEqual({ count: 0 }) },
    withoutRight: { status: 200, check: (body) => expect(body).toEqual({ count: 0 }) },
    async control(res) {
      expect(res.json()).toEqual({ count: 0 });
    },
  },
  {
    route: 'POST /api/activity-stream', method: 'POST',
    url: () => '/api/activity-stream',
    body: () => ({ limit: 5 }),
    underRule: { status: 200, check: (body) => expect(body).toEqual([]) },
    withoutRight: { status: 200, check: (body) => expect(body).toEqual([]) },
    async control(res) {
      expect(res.json()).toEqual([]);
    },
  },
  {
    route: 'POST /api/activity-stream/read', method: 'POST',
    url: () => '/api/activity-stream/read',
    body: () => ({ all: true }),
    underRule: { status: 403, error: 'AccessError' },
    withoutRight: { status: 403, error: 'AccessError' },
    // A signed-in person with nothing unread marks nothing.
    sessions: {
      underRule: { status: 200, check: (body) => expect(body).toEqual({ updated: 0 }) },
      withoutRight: { status: 200, check: (body) => expect(body).toEqual({ updated: 0 }) },
    },
    controlStatus: 403,
    async control(res) {
      expect(res.json()).toMatchObject({ error: 'AccessError', detail: expect.stringContaining('API key') });
    },
  },
  {
    // Web Push (CONTRACTS C5): the database's key is for any principal; subscriptions are a
    // person's browser's (an API key → 403), and this one's endpoint fails the SSRF guard.
    route: 'GET /api/push/key', method: 'GET',
    url: () => '/api/push/key',
    underRule: { status: 200, check: (body) => expect(Object.keys(body)).toEqual(['public_key']) },
    withoutRight: { status: 200, check: (body) => expect(Object.keys(body)).toEqual(['public_key']) },
    async control(res) {
      expect(Buffer.from(res.json().public_key, 'base64url')).toHaveLength(65);
    },
  },
  {
    route: 'POST /api/push/subscribe', method: 'POST',
    url: () => '/api/push/subscribe',
    body: () => ({ subscription: { endpoint: 'http://127.0.0.1:9/push', keys: { p256dh: 'x', auth: 'y' } } }),
    underRule: { status: 403, error: 'AccessError' },
    withoutRight: { status: 403, error: 'AccessError' },
    sessions: { underRule: { status: 400, error: 'BadRequest' }, withoutRight: { status: 400, error: 'BadRequest' } },
    controlStatus: 403,
    async control(res) {
      expect(res.json()).toMatchObject({ error: 'AccessError' });
    },
  },
  {
    route: 'POST /api/push/unsubscribe', method: 'POST',
    url: () => '/api/push/unsubscribe',
    body: () => ({ endpoint: 'https://push.example.com/none' }),
    underRule: { status: 403, error: 'AccessError' },
    withoutRight: { status: 403, error: 'AccessError' },
    sessions: {
      underRule: { status: 200, check: (body) => expect(body).toEqual({ unsubscribed: 0 }) },
      withoutRight: { status: 200, check: (body) => expect(body).toEqual({ unsubscribed: 0 }) },
    },
    controlStatus: 403,
    async control(res) {
      expect(res.json()).toMatchObject({ error: 'AccessError' });
    },
  },
  {
    route: 'GET /api/import-progress/:progress_id', method: 'GET',
    url: () => `/api/import-progress/${MATRIX_PROGRESS}`,
    // Progress belongs to whoever started the import (the administrator, before the matrix).
    underRule: NOT_FOUND,
    withoutRight: NOT_FOUND,
    async control(res) {
      expect(res.json()).toEqual({ done: 1, total: 1 });
    },
  },
  {
    route: 'POST /api/resequence/:model', method: 'POST',
    url: () => '/api/resequence/ProjectTask',
    body: () => ({ dropped_column_id: ids.target, after_column_id: null, scope_filter: `Q(project=${ids.project})` }),
    // The dropped record is hidden from the rule principals: as on the record routes, a 404.
    underRule: NOT_FOUND,
    async control(res) {
      const order: number[] = res.json().ids;
      expect(order[0]).toBe(ids.target);
      const [task] = await t.run(() => ProjectTask.query({ id: ids.target }).read(['sequence']));
      expect(task!.sequence).toBe(1);
    },
  },
  {
    route: 'POST /api/import-preview/:model', method: 'POST',
    url: () => '/api/import-preview/ProjectTask',
    upload: () => csvUpload('Name,Priority\nMatrix preview,1\n'),
    // A preview reads a file, not records: the read right on the model suffices.
    underRule: {
      status: 200,
      check(body) {
        expect(body.headers).toEqual(['Name', 'Priority']);
        expect(body.rows).toEqual([['Matrix preview', '1']]);
      },
    },
    async control(res) {
      expect(res.json().suggested_fields).toEqual(['name', 'priority']);
    },
  },
  {
    route: 'DELETE /api/delete/:model/:id', method: 'DELETE',
    url: () => `/api/delete/ProjectTask/${ids.target}`,
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toEqual({ id: ids.target, deleted: true });
      expect(await t.run(() => ProjectTask.query({ id: ids.target }).with_archived().count())).toBe(0);
    },
  },
  {
    route: 'POST /api/name_search/:model', method: 'POST',
    url: () => '/api/name_search/ProjectTask',
    body: () => ({ term: 'Matrix', limit: 50 }),
    underRule: { status: 200, check: listsVisibleNotHidden },
    async control(res) {
      expect(taskNames(res.json())).toContain('Matrix visible task');
    },
  },
  {
    route: 'GET /api/get_registry/:model', method: 'GET',
    url: () => '/api/get_registry/ProjectTask',
    // Not a record route: it needs the read right on the model (which the rule principals hold);
    // record rules narrow records, never the model's field definitions.
    underRule: { status: 200, check: (body) => expect(Object.keys(body)).toContain('stage') },
    async control(res) {
      expect(Object.keys(res.json())).toContain('name');
    },
  },
  {
    route: 'GET /api/model-info/:model', method: 'GET',
    url: () => '/api/model-info/ProjectTask',
    // Like get_registry: the model's description needs the read right, record rules do not narrow it.
    underRule: { status: 200, check: (body) => expect(body).toMatchObject({ model: 'ProjectTask' }) },
    async control(res) {
      expect(res.json()).toMatchObject({ model: 'ProjectTask', wizards: [{ method: 'action_reassign' }] });
    },
  },
  {
    route: 'GET /api/menus', method: 'GET',
    url: () => '/api/menus',
    // Every signed-in principal gets the menus it may open: without the right on tasks, no Project.
    withoutRight: { status: 200, check: (body) => expect((body as { name: string }[]).map((m) => m.name)).not.toContain('Project') },
    underRule: { status: 200, check: (body) => expect((body as { name: string }[]).map((m) => m.name)).toContain('Project') },
    async control(res) {
      expect((res.json() as { name: string }[]).map((m) => m.name)).toEqual(expect.arrayContaining(['Project', 'Settings']));
    },
  },
  {
    route: 'GET /api/web-modules', method: 'GET',
    url: () => '/api/web-modules',
    // Browser code of the installed modules: every signed-in principal's client loads the same entries.
    withoutRight: { status: 200, check: (body) => expect((body as { entries: string[] }).entries).toContain('/web/modules/project/index.js') },
    underRule: { status: 200, check: (body) => expect((body as { entries: string[] }).entries).toContain('/web/modules/project/index.js') },
    async control(res) {
      expect(res.json()).toEqual({ entries: expect.arrayContaining(['/web/modules/project/index.js']), modules: expect.arrayContaining(['core', 'messaging', 'project']) });
    },
  },
  {
    route: 'GET /api/window-action/:ref', method: 'GET',
    url: () => '/api/window-action/project.action_project_tasks',
    // Needs the read right on the action's model; record rules do not narrow an action.
    underRule: { status: 200, check: (body) => expect(body).toMatchObject({ model: 'ProjectTask' }) },
    async control(res) {
      expect(res.json()).toMatchObject({ identifier: 'project.action_project_tasks', model: 'ProjectTask' });
    },
  },
  {
    route: 'POST /api/api-docs-shares', method: 'POST',
    url: () => '/api/api-docs-shares',
    body: () => ({ name: 'Matrix new share' }),
    // Administrators only: the rule principals are administrators, so they may.
    underRule: { status: 200, check: (body) => expect(body.token).toMatch(/^ffdocs_/) },
    async control(res) {
      expect(res.json()).toMatchObject({ name: 'Matrix new share', token: expect.stringMatching(/^ffdocs_/) });
    },
  },
  {
    route: 'GET /api/api-docs-shares', method: 'GET',
    url: () => '/api/api-docs-shares',
    underRule: { status: 200, check: (body) => expect(body.map((s: { id: number }) => s.id)).toContain(ids.share) },
    async control(res) {
      expect(JSON.stringify(res.json())).not.toContain('ffdocs_');
    },
  },
  {
    route: 'DELETE /api/api-docs-shares/:id', method: 'DELETE',
    url: () => `/api/api-docs-shares/${ids.share}`,
    // Revoking twice is harmless: the rule columns and the control each answer 200.
    underRule: { status: 200, check: (body) => expect(body).toMatchObject({ id: ids.share }) },
    async control(res) {
      expect(res.json()).toMatchObject({ id: ids.share });
    },
  },
  {
    route: 'GET /api/modules', method: 'GET',
    url: () => '/api/modules',
    // Every user may read the catalogue (Module's read right).
    withoutRight: { status: 200, check: (body) => expect(body.map((m: { identifier: string }) => m.identifier)).toContain('sales') },
    underRule: { status: 200, check: (body) => expect(body.map((m: { identifier: string }) => m.identifier)).toContain('sales') },
    async control(res) {
      expect(res.json().map((m: { identifier: string }) => m.identifier)).toEqual(expect.arrayContaining(['core', 'contacts', 'project', 'sales']));
    },
  },
  {
    route: 'POST /api/modules/:identifier/install', method: 'POST',
    url: () => '/api/modules/sales/install',
    underRule: { status: 200, check: (body) => expect(body.module).toMatchObject({ identifier: 'sales', pending: 'install' }) },
    async control(res) {
      expect(res.json().module).toMatchObject({ identifier: 'sales', pending: 'install' });
    },
  },
  {
    route: 'POST /api/modules/:identifier/upgrade', method: 'POST',
    url: () => '/api/modules/contacts/upgrade',
    underRule: { status: 200, check: (body) => expect(body.module).toMatchObject({ identifier: 'contacts', pending: 'upgrade' }) },
    async control(res) {
      expect(res.json().module).toMatchObject({ identifier: 'contacts', pending: 'upgrade' });
    },
  },
  {
    route: 'DELETE /api/modules/:identifier/pending', method: 'DELETE',
    url: () => '/api/modules/sales/pending',
    underRule: { status: 200, check: (body) => expect(body).toMatchObject({ identifier: 'sales', pending: null }) },
    async control(res) {
      expect(res.json()).toMatchObject({ identifier: 'sales', pending: null });
    },
  },
  {
    route: 'POST /api/api-keys', method: 'POST',
    url: () => '/api/api-keys',
    body: () => ({ name: 'Matrix hidden new key', groups: ['core.group_user'] }),
    // Not a record route: like POST /api/create, the new key fails the rule principals' create
    // rule on ApiKey → 403 and rolled back (decisions, Permissions: "a create whose new record
    // fails the create rules is 403 and rolled back").
    underRule: { status: 403, error: 'AccessError' },
    async control(res) {
      const { key } = res.json();
      expect(key).toMatch(/^ff_/);
      expect((await send('GET', '/api/get_registry/Company', `Bearer ${key}`)).statusCode).toBe(200);
    },
  },
  {
    route: 'GET /api/api-keys', method: 'GET',
    url: () => '/api/api-keys',
    // A list route: every key the caller may read (decisions / api-keys.ts) → 200 without the
    // key its rule hides.
    underRule: {
      status: 200,
      check(body) {
        const listed = (body as { id: number; name: string }[]);
        expect(listed.length).toBeGreaterThan(0);
        expect(listed.map((k) => k.id)).not.toContain(ids.victimKey);
        expect(listed.filter((k) => k.name.startsWith(HIDDEN))).toEqual([]);
      },
    },
    async control(res) {
      expect(res.json().map((k: { id: number }) => k.id)).toContain(ids.victimKey);
    },
  },
  {
    route: 'DELETE /api/api-keys/:id', method: 'DELETE',
    url: () => `/api/api-keys/${ids.victimKey}`,
    // Revoking acts on one key: a key the caller cannot read does not exist for it (decisions:
    // "404 on every route"; api-keys.ts: "Unknown (or hidden from the caller) → 404").
    underRule: NOT_FOUND,
    async control(res) {
      expect(res.json()).toEqual({ id: ids.victimKey, revoked: true });
      expect((await send('GET', '/api/get_registry/Company', `Bearer ${victimKey}`)).statusCode).toBe(401);
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Conditions (columns).
// ---------------------------------------------------------------------------------------------

type Condition =
  | { label: string; kind: 'unauthenticated' }
  | { label: string; kind: 'no-acl' }
  | { label: string; kind: 'rule' };

const CONDITIONS: Condition[] = [
  { label: 'no credential', kind: 'unauthenticated' },
  { label: 'malformed header', kind: 'unauthenticated' },
  { label: 'unknown key', kind: 'unauthenticated' },
  { label: 'revoked key', kind: 'unauthenticated' },
  { label: 'expired key', kind: 'unauthenticated' },
  { label: 'deactivated service account', kind: 'unauthenticated' },
  { label: 'deactivated user (session)', kind: 'unauthenticated' },
  { label: 'session for another database', kind: 'unauthenticated' },
  { label: 'no ACL (API key)', kind: 'no-acl' },
  { label: 'no ACL (signed-in user)', kind: 'no-acl' },
  { label: 'record rule hides the record (API key)', kind: 'rule' },
  { label: 'record rule hides the record (signed-in user)', kind: 'rule' },
];

/** A request with exactly this Authorization header (or none), on the non-dev app, database `db`. */
function send(method: Method, url: string, authorization: string | undefined, body?: unknown, db = t.name) {
  const headers: Record<string, string> = { 'x-db-name': db };
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

function call(e: Endpoint, authorization: string | undefined) {
  if (!e.upload) return send(e.method, e.url(), authorization, e.body?.());
  const { payload, contentType } = e.upload();
  const headers: Record<string, string> = { 'x-db-name': t.name, 'content-type': contentType };
  if (authorization !== undefined) headers.authorization = authorization;
  return app.inject({ method: e.method, url: e.url(), headers, payload });
}

/** A multipart/form-data body holding one CSV file. */
function csvUpload(csv: string): { payload: Buffer; contentType: string } {
  const boundary = '----ffmatrix7e3a';
  const payload = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="tasks.csv"\r\n`
    + `Content-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`);
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Signs in on `db` through the app (ALTCHA first), returning the access token. */
async function signIn(email: string, db = t.name): Promise<string> {
  const res = await app.inject({
    method: 'POST', url: '/auth/authenticate',
    headers: { 'x-db-name': db, 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password: PASSWORD, altcha: await solvedAltcha(app, db) }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().access_token as string;
}

async function groupIds(identifiers: readonly string[]): Promise<number[]> {
  return Group.query({ identifier__in: [...identifiers] }).ids();
}

async function newUser(name: string, groups: readonly string[], extraGroups: number[] = []): Promise<string> {
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${randomBytes(2).toString('hex')}@example.test`;
  await t.run(async () => {
    // A person of the database's first company, as the service accounts' users are.
    const [company] = await Company.query().order_by('id ASC').limit(1).ids();
    await User.create({ name, email, password: PASSWORD, groups: [...(await groupIds(groups)), ...extraGroups], company, companies: [company] });
  });
  return email;
}

function newKey(name: string, groups: readonly string[], expiresAt: string | null = null) {
  return t.run(() => createServiceAccountKey({ name, groups, expiresAt }));
}

/** What the /api routes could have written: tasks, keys (not `last_used_at`, which every full
 *  credential look-up may stamp, by design), service accounts and users. */
function snapshot() {
  return t.run(async () => ({
    tasks: await ProjectTask.query().with_archived().order_by('id ASC')
      .read(['name', 'priority', 'description', 'stage', 'active', 'project', 'updated_date']),
    apiKeys: await ApiKey.query().order_by('id ASC').read(['name', 'prefix', 'service_account', 'expires_at', 'revoked_at', 'scopes']),
    serviceAccounts: await ServiceAccount.query().with_archived().order_by('id ASC').read(['name', 'active', 'updated_date']),
    users: await User.query().with_archived().order_by('id ASC').read(['name', 'active', 'updated_date']),
  }));
}
let before: Awaited<ReturnType<typeof snapshot>>;

/** Asserts the exact `{detail, error}` error body (§7; no traceback on a non-dev app). */
function expectErrorBody(res: LightMyRequestResponse, error: string, label: string) {
  const body = res.json();
  // `field` names the input a refusal is about, when it is about one (the error catalogue).
  expect(Object.keys(body).filter((k) => k !== 'field').sort(), `${label}: ${res.body}`).toEqual(['detail', 'error']);
  expect(body.error, `${label}: ${res.body}`).toBe(error);
  expect(typeof body.detail, label).toBe('string');
  expect(body.detail.trim(), label).not.toBe('');
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  [t, other] = await Promise.all([testDatabase('full'), testDatabase('core')]);
  app = await buildApp(t.platform, { dev: false, altchaMaxNumber: 10 });

  // Records the routes act on, and the group whose record rules hide the "Matrix hidden" ones.
  await t.run(async () => {
    ids.project = (await ProjectProject.create({ name: 'Matrix project' })).id;
    const stages = await ProjectStage.query().order_by('sequence ASC', 'id ASC').read(['is_closed']);
    ids.openStage = stages.find((s) => s.is_closed !== true)!.id as number;
    ids.closedStage = stages.find((s) => s.is_closed === true)!.id as number;
    ids.target = (await ProjectTask.create({ name: 'Matrix hidden target', project: ids.project, stage: ids.openStage, deadline: TARGET_DEADLINE })).id;
    ids.otherProject = (await ProjectProject.create({ name: 'Matrix other project' })).id;
    ids.otherParent = (await ProjectTask.create({ name: 'Matrix visible parent', project: ids.otherProject, stage: ids.openStage })).id;
    ids.bulkVictim = (await ProjectTask.create({ name: 'Matrix hidden bulk victim', project: ids.project, stage: ids.openStage })).id;
    ids.visible = (await ProjectTask.create({ name: 'Matrix visible task', project: ids.project, stage: ids.openStage })).id;
    ids.targetFile = await Attachment.create_from_file(Buffer.from('matrix file').toString('base64'), 'matrix.txt', 'ProjectTask', ids.target, 'description');
    ids.ruleGroup = (await Group.create({ name: 'Matrix restricted', identifier: 'matrix.group_restricted' })).id;
    await RecordRule.create_many([
      { name: 'Matrix: hide tasks', model: 'ProjectTask', filter: `~Q(name__startswith='${HIDDEN}')`, groups: [ids.ruleGroup] },
      { name: 'Matrix: hide keys', model: 'ApiKey', filter: `~Q(name__startswith='${HIDDEN}')`, groups: [ids.ruleGroup] },
    ]);
  });
  const victim = await newKey('Matrix hidden victim key', ADMIN_GROUPS);
  ids.victimKey = victim.apiKeyId;
  victimKey = victim.key;
  const share = await t.api('POST', '/api/api-docs-shares', { name: 'Matrix share' });
  expect(share.statusCode, share.body).toBe(200);
  ids.share = share.json().id;

  // --- 401 columns ----------------------------------------------------------------------------
  auth['no credential'] = undefined;
  // A valid administrator key, sent with the wrong scheme.
  auth['malformed header'] = `Token ${t.apiKey}`;
  // Shaped exactly like a real key, but never issued.
  auth['unknown key'] = `Bearer ff_${randomBytes(32).toString('base64url')}`;

  // Administrator keys that work first (so this app also remembers them: the refusal must come
  // through the remembered-credential check too), then are revoked / expired / deactivated.
  const revoked = await newKey('Matrix revoked', ADMIN_GROUPS);
  const expired = await newKey('Matrix expired', ADMIN_GROUPS, new Date(Date.now() + 3_600_000).toISOString());
  const deactivated = await newKey('Matrix deactivated', ADMIN_GROUPS);
  const deactivatedUserEmail = await newUser('Matrix deactivated person', ADMIN_GROUPS);
  const deactivatedSession = await signIn(deactivatedUserEmail);
  auth['revoked key'] = `Bearer ${revoked.key}`;
  auth['expired key'] = `Bearer ${expired.key}`;
  auth['deactivated service account'] = `Bearer ${deactivated.key}`;
  auth['deactivated user (session)'] = `Bearer ${deactivatedSession}`;
  for (const label of ['revoked key', 'expired key', 'deactivated service account', 'deactivated user (session)']) {
    for (let i = 0; i < 2; i++) {
      const res = await send('POST', `/api/fetch/ProjectTask/${ids.target}`, auth[label], { fields: ['name'] });
      expect(res.statusCode, `${label} works before: ${res.body}`).toBe(200);
    }
  }
  await t.run(async () => {
    await ApiKey.query({ id: revoked.apiKeyId }).update({ revoked_at: new Date().toISOString() });
    await ApiKey.query({ id: expired.apiKeyId }).update({ expires_at: new Date(Date.now() - 60_000).toISOString() });
    await ServiceAccount.query({ id: deactivated.serviceAccountId }).update({ active: false });
    await User.query({ email: deactivatedUserEmail }).update({ active: false });
  });

  // A session of the other database: it works there, and claims that database.
  await other.run(async () => {
    const groups = await Group.query({ identifier__in: ADMIN_GROUPS }).ids();
    await User.create({ name: 'Elsewhere', email: 'elsewhere@example.test', password: PASSWORD, groups });
  });
  const foreign = await signIn('elsewhere@example.test', other.name);
  const elsewhere = await send('GET', '/api/get_registry/Company', `Bearer ${foreign}`, undefined, other.name);
  expect(elsewhere.statusCode, elsewhere.body).toBe(200);
  expect(await verifyAccessToken(foreign, other.name, t.platform.secret)).not.toBeNull();
  expect(await verifyAccessToken(foreign, t.name, t.platform.secret)).toBeNull();
  auth['session for another database'] = `Bearer ${foreign}`;

  // --- 403 columns: authenticated (they read what core.group_user may), no right on the models.
  auth['no ACL (API key)'] = `Bearer ${(await newKey('Matrix no ACL', NO_ACL_GROUPS)).key}`;
  auth['no ACL (signed-in user)'] = `Bearer ${await signIn(await newUser('Matrix no ACL person', NO_ACL_GROUPS))}`;
  for (const label of ['no ACL (API key)', 'no ACL (signed-in user)']) {
    const res = await send('GET', '/api/get_registry/Company', auth[label]);
    expect(res.statusCode, `${label} is authenticated: ${res.body}`).toBe(200);
  }

  // --- record-rule columns: every right on ProjectTask and ApiKey, plus the matrix group.
  const ruleKey = await newKey('Matrix rule key', ADMIN_GROUPS);
  await t.run(async () => {
    const groups = (await ServiceAccount.query({ id: ruleKey.serviceAccountId }).read(['groups']))[0]!.groups as { id: number }[];
    await ServiceAccount.query({ id: ruleKey.serviceAccountId }).update({ groups: [...groups.map((g) => g.id), ids.ruleGroup] });
  });
  auth['record rule hides the record (API key)'] = `Bearer ${ruleKey.key}`;
  auth['record rule hides the record (signed-in user)'] =
    `Bearer ${await signIn(await newUser('Matrix rule person', ADMIN_GROUPS, [ids.ruleGroup]))}`;
  for (const label of ['record rule hides the record (API key)', 'record rule hides the record (signed-in user)']) {
    // The visible record is there for them, and the rights too: only the rule hides the target.
    const res = await send('POST', `/api/fetch/ProjectTask/${ids.visible}`, auth[label], { fields: ['name'] });
    expect(res.statusCode, `${label} reads a visible task: ${res.body}`).toBe(200);
    const hidden = await send('POST', `/api/fetch/ProjectTask/${ids.target}`, auth[label], { fields: ['name'] });
    expect(hidden.statusCode, `${label} does not see the target: ${hidden.body}`).toBe(404);
  }
  // The administrator sees the target and the victim key: they exist.
  expect((await send('POST', `/api/fetch/ProjectTask/${ids.target}`, `Bearer ${t.apiKey}`, {})).statusCode).toBe(200);

  // An import the administrator ran with a progress id: its progress is theirs alone.
  const started = await send('POST', '/api/import/ProjectTask', `Bearer ${t.apiKey}`,
    { fields: ['name'], data: [['name'], ['Matrix progress task']], dry_run: true, progress_id: MATRIX_PROGRESS });
  expect(started.statusCode, started.body).toBe(200);

  before = await snapshot();
});

afterAll(async () => {
  await app?.close();
  await other?.close();
  await t?.close();
});

describe('the matrix covers every /api route', () => {
  it('its endpoint list is exactly the /api/* routes the app registers', () => {
    // printRoutes({commonPrefix: false}) draws a tree: one node per line, children indented by
    // four characters, each node's path relative to its parent's.
    const registered: string[] = [];
    const stack: string[] = [];
    for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      stack.push(m[2]!);
      const path = stack.join('');
      for (const method of (m[3] ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'HEAD')) {
        if (path.startsWith('/api/')) registered.push(`${method} ${path}`);
      }
    }
    expect(registered.length).toBeGreaterThan(0);
    expect(ENDPOINTS.map((e) => e.route).sort()).toEqual(registered.sort());
  });
});

describe.each(CONDITIONS)('$label', (condition) => {
  it.each(ENDPOINTS.map((e) => [e.route, e] as const))(`%s × ${condition.label}`, async (route, endpoint) => {
    const label = `${route} × ${condition.label}`;
    const res = await call(endpoint, auth[condition.label]);
    if (condition.kind === 'unauthenticated') {
      expect(res.statusCode, `${label}: ${res.body}`).toBe(401);
      expectErrorBody(res, 'AuthenticationError', label);
    } else if (condition.kind === 'no-acl') {
      const session = condition.label.includes('(signed-in user)') ? endpoint.sessions : undefined;
      const expected = session?.withoutRight ?? endpoint.withoutRight ?? { status: 403, error: 'AccessError' };
      expect(res.statusCode, `${label}: ${res.body}`).toBe(expected.status);
      if (expected.status === 200) expected.check(res.json());
      else expectErrorBody(res, expected.error, label);
    } else {
      const session = condition.label.includes('(signed-in user)') ? endpoint.sessions : undefined;
      const expected = session?.underRule ?? endpoint.underRule;
      expect(res.statusCode, `${label}: ${res.body}`).toBe(expected.status);
      if (expected.status === 200) expected.check(res.json());
      else expectErrorBody(res, expected.error, label);
    }
  });
});

describe('after the matrix', () => {
  it('nothing was written', async () => {
    const after = await snapshot();
    expect(after.tasks).toEqual(before.tasks);
    expect(after.apiKeys).toEqual(before.apiKeys);
    expect(after.serviceAccounts).toEqual(before.serviceAccounts);
    expect(after.users).toEqual(before.users);
    // Spelled out, for a readable failure.
    expect(after.tasks.map((r) => r.name)).not.toContain('Matrix hidden created');
    expect(after.apiKeys.map((r) => r.name)).not.toContain('Matrix hidden new key');
    expect(after.apiKeys.find((k) => k.id === ids.victimKey)?.revoked_at).toBeNull();
  });

  // Control column, run last because it writes: the same requests as the administrator succeed
  // and do what they say, so the requests above were ones that would have written.
  it.each(ENDPOINTS.map((e) => [e.route, e] as const))('%s × administrator (control) succeeds', async (route, endpoint) => {
    const res = await call(endpoint, `Bearer ${t.apiKey}`);
    expect(res.statusCode, `${route} × administrator: ${res.body}`).toBe(endpoint.controlStatus ?? 200);
    await endpoint.control(res);
  });
});
