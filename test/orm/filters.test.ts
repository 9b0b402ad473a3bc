/**
 * Filter compile semantics against real rows: every lookup (NULL handling included), LIKE
 * patterns whose value holds % and _, ManyToOne joins, to-many EXISTS, negation and
 * disjunction, variables, and precise errors for unknown fields and lookups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuerySyntaxError } from '../../src/errors.js';
import { todayIso } from '../../src/orm/query/query-scope.js';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model } from '../support/orm.js';

let t: TestDatabase;
/** Names of the seeded OrmAllTypes records, by their role. */
let tagIds: Record<string, number> = {};
let partnerIds: Record<string, number> = {};

beforeAll(async () => {
  t = await fixtureDatabase('full', ['orm_fields']);
  await t.run(async () => {
    const [p1, p2] = await model('OrmPartner').create_many([{ name: 'Partner One', rank: 1 }, { name: 'Partner Two', rank: 5 }]);
    partnerIds = { one: p1!.id, two: p2!.id };
    const [red, blue, green] = await model('OrmTag').create_many([{ name: 'red' }, { name: 'blue' }, { name: 'green' }]);
    tagIds = { red: red!.id, blue: blue!.id, green: green!.id };
    // Five rows in the group 'lk' (title), covering values, NULLs and LIKE metacharacters.
    await model('OrmAllTypes').create_many([
      { title: 'lk', name: 'a', code: 'x%y', qty: 1, flag: true, day: '2024-01-01', state: 'draft', partner: p1!.id, tags: [red!.id, blue!.id] },
      { title: 'lk', name: 'b', code: 'x_y', qty: 2, flag: false, day: '2024-06-15', state: 'done', partner: p2!.id, tags: [red!.id] },
      { title: 'lk', name: 'c', code: 'xAy', qty: 3, flag: null, day: null, state: 'draft', partner: p2!.id },
      { title: 'lk', name: 'd', code: null, qty: null, flag: null, day: '2024-12-31', state: 'done' },
      { title: 'lk', name: 'e', code: 'x\\y', qty: 5, flag: true, day: '2025-01-01', state: 'draft', tags: [green!.id] },
    ]);
  });
});
afterAll(async () => {
  await t?.close();
});

/** Names (sorted) of the 'lk' rows matching `filter`. */
function match(filter: string, options: Parameters<TestDatabase['run']>[1] = {}): Promise<string[]> {
  return t.run(async () => {
    const recs = await model('OrmAllTypes').query(filter).filter({ title: 'lk' }).order_by('name ASC').all();
    return recs.map((r) => (r as Rec).name as string);
  }, options);
}

async function syntaxError(filter: string, modelName = 'OrmAllTypes'): Promise<QuerySyntaxError> {
  try {
    await t.run(() => model(modelName).query(filter).ids());
  } catch (err) {
    expect(err).toBeInstanceOf(QuerySyntaxError);
    return err as QuerySyntaxError;
  }
  throw new Error(`expected ${filter} to be rejected`);
}

describe('comparison lookups', () => {
  it('exact (also without a lookup) and exact None', async () => {
    expect(await match('Q(qty=2)')).toEqual(['b']);
    expect(await match('Q(qty__exact=2)')).toEqual(['b']);
    expect(await match("Q(name='c')")).toEqual(['c']);
    expect(await match('Q(qty=None)')).toEqual(['d']);
    expect(await match("Q(state='done')")).toEqual(['b', 'd']);
  });

  it('not keeps empty values; not None means "has a value"', async () => {
    expect(await match('Q(qty__not=2)')).toEqual(['a', 'c', 'd', 'e']);
    expect(await match('Q(qty__not=None)')).toEqual(['a', 'b', 'c', 'e']);
  });

  it('Boolean: True matches true only; False matches false and empty', async () => {
    expect(await match('Q(flag=True)')).toEqual(['a', 'e']);
    expect(await match('Q(flag=False)')).toEqual(['b', 'c', 'd']);
    expect(await match('Q(flag=None)')).toEqual(['c', 'd']);
    expect(await match('Q(flag__not=True)')).toEqual(['b', 'c', 'd']);
  });

  it('in, with None in the list matching empty values, and an empty list matching nothing', async () => {
    expect(await match('Q(qty__in=[1, 3])')).toEqual(['a', 'c']);
    expect(await match('Q(qty__in=[1, None])')).toEqual(['a', 'd']);
    expect(await match('Q(qty__in=[])')).toEqual([]);
    expect(await match("Q(code__in=['x%y', 'x_y'])")).toEqual(['a', 'b']);
  });

  it('not_in keeps empty values unless None is listed; an empty list matches everything', async () => {
    expect(await match('Q(qty__not_in=[1, 3])')).toEqual(['b', 'd', 'e']);
    expect(await match('Q(qty__not_in=[1, None])')).toEqual(['b', 'c', 'e']);
    expect(await match('Q(qty__not_in=[])')).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('gt, gte, lt, lte on numbers and dates (empty values never match)', async () => {
    expect(await match('Q(qty__gt=2)')).toEqual(['c', 'e']);
    expect(await match('Q(qty__gte=2)')).toEqual(['b', 'c', 'e']);
    expect(await match('Q(qty__lt=2)')).toEqual(['a']);
    expect(await match('Q(qty__lte=2)')).toEqual(['a', 'b']);
    expect(await match("Q(day__gte='2024-06-15')")).toEqual(['b', 'd', 'e']);
    expect(await match("Q(day__lt='2024-06-15')")).toEqual(['a']);
  });

  it('range is inclusive at both ends', async () => {
    expect(await match('Q(qty__range=[2, 3])')).toEqual(['b', 'c']);
    expect(await match("Q(day__range=['2024-01-01', '2024-12-31'])")).toEqual(['a', 'b', 'd']);
  });

  it('isnull', async () => {
    expect(await match('Q(qty__isnull=True)')).toEqual(['d']);
    expect(await match('Q(code__isnull=False)')).toEqual(['a', 'b', 'c', 'e']);
    expect(await match('Q(partner__isnull=True)')).toEqual(['d', 'e']);
  });
});

describe('text lookups', () => {
  it('contains and icontains treat % and _ in the value literally', async () => {
    expect(await match("Q(code__contains='%')")).toEqual(['a']);
    expect(await match("Q(code__contains='_')")).toEqual(['b']);
    expect(await match("Q(code__contains='\\\\')")).toEqual(['e']);
    expect(await match("Q(code__contains='A')")).toEqual(['c']);
    expect(await match("Q(code__contains='a')")).toEqual([]);
    expect(await match("Q(code__icontains='a')")).toEqual(['c']);
    expect(await match("Q(code__icontains='X')")).toEqual(['a', 'b', 'c', 'e']);
  });

  it('startswith / istartswith and endswith / iendswith, literal metacharacters included', async () => {
    expect(await match("Q(code__startswith='x%')")).toEqual(['a']);
    expect(await match("Q(code__startswith='x_')")).toEqual(['b']);
    expect(await match("Q(code__startswith='X')")).toEqual([]);
    expect(await match("Q(code__istartswith='XA')")).toEqual(['c']);
    expect(await match("Q(code__endswith='_y')")).toEqual(['b']);
    expect(await match("Q(code__endswith='%y')")).toEqual(['a']);
    expect(await match("Q(code__iendswith='AY')")).toEqual(['c']);
  });

  it('apply to Selection fields and to display_name, not to numbers', async () => {
    expect(await match("Q(state__startswith='do')")).toEqual(['b', 'd']);
    expect(await match("Q(display_name__in=['a', 'e'])")).toEqual(['a', 'e']);
    const err = await syntaxError("Q(qty__contains='1')");
    expect(err.message).toContain('qty');
  });
});

describe('ManyToOne traversal', () => {
  it('joins the target and compares its fields, without duplicating rows', async () => {
    expect(await match("Q(partner__name='Partner Two')")).toEqual(['b', 'c']);
    expect(await match('Q(partner__rank__gte=2)')).toEqual(['b', 'c']);
    expect(await match("Q(partner__name__icontains='partner')")).toEqual(['a', 'b', 'c']);
    expect(await match(`Q(partner=${partnerIds.one})`)).toEqual(['a']);
    expect(await match(`Q(partner__id=${partnerIds.one})`)).toEqual(['a']);
    expect(await match(`Q(partner__in=[${partnerIds.one}, ${partnerIds.two}])`)).toEqual(['a', 'b', 'c']);
    // Two conditions on the same relation share one join.
    expect(await match("Q(partner__name='Partner Two') & Q(partner__rank=5)")).toEqual(['b', 'c']);
    expect(await t.run(() => model('OrmAllTypes').query("Q(partner__name__icontains='partner') & Q(title='lk')").count())).toBe(3);
  });

  it('negation of a condition through a ManyToOne keeps records without the link', async () => {
    expect(await match("~Q(partner__name='Partner Two')")).toEqual(['a', 'd', 'e']);
  });

  it('traverses several ManyToOne levels', async () => {
    await t.run(async () => {
      const customer = await model('Contact').create({ name: 'Deep Customer' });
      const project = await model('ProjectProject').create({ name: 'Deep project', customer: customer.id });
      const task = await model('ProjectTask').create({ name: 'deep task', project: project.id });
      await model('ProjectTask').create({ name: 'shallow task' });
      expect(await model('ProjectTask').query("Q(project__customer__name='Deep Customer')").ids()).toEqual([task.id]);
      expect(await model('ProjectTask').query("Q(project__customer__name__startswith='Deep') | Q(name='shallow task')").count()).toBe(2);
    });
  });
});

describe('to-many traversal', () => {
  it('a record with two matching linked records appears once (EXISTS, not a join)', async () => {
    expect(await match("Q(tags__name__in=['red', 'blue'])")).toEqual(['a', 'b']);
    expect(await t.run(() => model('OrmAllTypes').query("Q(tags__name__in=['red', 'blue']) & Q(title='lk')").count())).toBe(2);
    expect(await match("Q(tags__name='red') & Q(tags__name='blue')")).toEqual(['a']);
  });

  it('compares linked ids, tests for no links and negates', async () => {
    expect(await match(`Q(tags=${tagIds.green})`)).toEqual(['e']);
    expect(await match(`Q(tags__in=[${tagIds.green}, ${tagIds.blue}])`)).toEqual(['a', 'e']);
    expect(await match('Q(tags__isnull=True)')).toEqual(['c', 'd']);
    expect(await match('Q(tags__isnull=False)')).toEqual(['a', 'b', 'e']);
    expect(await match("~Q(tags__name='red')")).toEqual(['c', 'd', 'e']);
  });

  it('negative lookups are about the whole set of links: not linked to those ids, records without links included', async () => {
    const { red, green } = tagIds;
    expect(await match(`Q(tags__not=${red})`)).toEqual(['c', 'd', 'e']);
    expect(await match(`Q(tags__not_in=[${red}, ${green}])`)).toEqual(['c', 'd']);
    expect(await match(`Q(tags__not_in=[${red}, None])`)).toEqual(['e']);
    expect(await match('Q(tags__not_in=[])')).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await match(`~Q(tags__in=[${red}, ${green}])`)).toEqual(await match(`Q(tags__not_in=[${red}, ${green}])`));
    expect(await match(`~Q(tags=${red})`)).toEqual(await match(`Q(tags__not=${red})`));
  });

  it('None compares with "no links": tags=None, tags__in=[…, None], tags__not=None', async () => {
    expect(await match('Q(tags=None)')).toEqual(['c', 'd']);
    expect(await match(`Q(tags__in=[${tagIds.green}, None])`)).toEqual(['c', 'd', 'e']);
    expect(await match('Q(tags__not=None)')).toEqual(['a', 'b', 'e']);
  });

  it('traverses a OneToMany (the reverse made from related_name)', async () => {
    await t.run(async () => {
      const partners = await model('OrmPartner').query("Q(all_types__qty__gte=2) & Q(all_types__title='lk')").ids();
      expect(partners).toEqual([partnerIds.two]);
      expect(await model('OrmPartner').query("Q(all_types__name__in=['b', 'c'])").count()).toBe(1);
      expect(await model('OrmTag').query("Q(all_types__name='a')").order_by('name ASC').ids()).toEqual([tagIds.blue, tagIds.red]);
    });
  });
});

describe('~ and |', () => {
  it('| is a union, & an intersection', async () => {
    expect(await match('Q(qty=1) | Q(qty=3)')).toEqual(['a', 'c']);
    expect(await match("Q(qty__gte=2) & Q(state='draft')")).toEqual(['c', 'e']);
    // & binds tighter than |; flag=False also matches an empty flag (d).
    expect(await match("Q(qty=1) | Q(state='done') & Q(flag=False)")).toEqual(['a', 'b', 'd']);
    expect(await match("(Q(qty=1) | Q(state='done')) & Q(flag=False)")).toEqual(['b', 'd']);
  });

  it('~ is the complement: a condition and its negation together match every record, empty values included', async () => {
    for (const cond of ['Q(qty=2)', 'Q(qty__in=[1, 3])', "Q(code__contains='y')", 'Q(qty__gt=2)', "Q(partner__rank=5)", "Q(day__lt='2024-06-01')"]) {
      const yes = await match(cond);
      const no = await match(`~${cond}`);
      expect([...yes, ...no].sort(), cond).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(yes.filter((n) => no.includes(n)), cond).toEqual([]);
    }
    // So ~Q(x__in=…) means the same as x__not_in.
    expect(await match('~Q(qty__in=[1, 3])')).toEqual(await match('Q(qty__not_in=[1, 3])'));
    expect(await match('~~Q(qty=2)')).toEqual(['b']);
  });

  it('Q() matches everything', async () => {
    expect(await match('Q()')).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});

describe('variables', () => {
  it('user_id is the uid the code runs as', async () => {
    const adminId = await t.run(async () => (await model('User').query({ identifier: 'core.user_admin' }).first())!.id);
    await t.run(async () => {
      await model('ProjectProject').create_many([{ name: 'Mine', manager: adminId }, { name: 'Nobody’s' }]);
    });
    const mine = await t.run(async () => model('ProjectProject').query("Q(manager=user_id) & Q(name__in=['Mine', 'Nobody’s'])").all(), { uid: adminId });
    expect(mine.map((p) => (p as Rec).name)).toEqual(['Mine']);
    // As the platform (no uid), user_id is None: the filter compares with NULL.
    const none = await t.run(async () => model('ProjectProject').query("Q(manager=user_id) & Q(name__in=['Mine', 'Nobody’s'])").all());
    expect(none.map((p) => (p as Rec).name)).toEqual(['Nobody’s']);
    // created_by is filled with the uid, so `Q(created_by=user_id)` finds what the user created.
    const created = await t.run(async () => (await model('OrmTag').create({ name: 'made by admin' })).id, { uid: adminId });
    expect(await t.run(() => model('OrmTag').query('Q(created_by=user_id)').ids(), { uid: adminId })).toContain(created);
  });

  it('today is the current date, comparable with Date fields', async () => {
    const today = todayIso();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await t.run(async () => {
      const [due, late, later] = await model('ProjectTask').create_many([
        { name: 'var due', deadline: today }, { name: 'var late', deadline: '2000-01-01' }, { name: 'var later', deadline: tomorrow },
      ]);
      const base = model('ProjectTask').query("Q(name__startswith='var ')");
      expect(await base.filter('Q(deadline=today)').ids()).toEqual([due!.id]);
      expect(await base.filter('Q(deadline__lt=today)').ids()).toEqual([late!.id]);
      expect(await base.filter('Q(deadline__gt=today)').ids()).toEqual([later!.id]);
    });
  });

  it('company_ids expands to the list of the env companies', async () => {
    const c1 = await t.run(async () => {
      const [co1, co2] = await model('Company').create_many([{ name: 'Var Co 1' }, { name: 'Var Co 2' }]);
      await model('Contact').create_many([{ name: 'var contact 1', company: co1!.id }, { name: 'var contact 2', company: co2!.id }]);
      return co1!.id;
    });
    const found = await t.run(
      async () => (await model('Contact').query("Q(company__in=company_ids) & Q(name__startswith='var contact')").all()).map((c) => (c as Rec).name),
      { companyIds: [c1], companyId: c1 },
    );
    expect(found).toEqual(['var contact 1']);
  });
});

describe('errors', () => {
  it('an unknown field is a QuerySyntaxError naming the field, the model and the position', async () => {
    const err = await syntaxError("Q(name='a') & Q(nope=1)");
    expect(err.message).toContain("'nope'");
    expect(err.message).toContain('OrmAllTypes');
    expect(err.position).toBe(16);
  });

  it('an unknown field after a relation names the target model', async () => {
    const err = await syntaxError('Q(partner__nope=1)');
    expect(err.message).toContain("'nope'");
    expect(err.message).toContain('OrmPartner');
  });

  it('an unknown lookup is a QuerySyntaxError naming it', async () => {
    const err = await syntaxError('Q(qty__bogus=1)');
    expect(err.message).toContain('bogus');
  });

  it('a value of the wrong type, or a list where one value is expected, is a QuerySyntaxError', async () => {
    expect((await syntaxError("Q(qty='many')")).message).toContain('qty');
    await syntaxError('Q(qty__in=3)');
    await syntaxError('Q(qty__gt=[1, 2])');
    await syntaxError('Q(qty__range=[1])');
    await syntaxError("Q(flag='yes')");
    await syntaxError("Q(blob='AA==')");
  });

  it('a filter on a non-stored computed field is refused', async () => {
    await syntaxError("Q(display_name='x')", 'OrmNameless');
  });

  it('internal fields cannot be filtered on by API queries', async () => {
    await expect(t.run(() => model('User').query().public_only().filter("Q(password_hash='x')").ids())).rejects.toThrow(/password_hash/);
    const res = await t.api('POST', '/api/query/User', { filter_str: "Q(password_hash__isnull=False)" });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('QuerySyntaxError');
  });
});
