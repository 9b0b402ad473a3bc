import { describe, expect, it } from 'vitest';
import { QuerySyntaxError } from '../../src/errors.js';
import { LOOKUPS, VARIABLES } from '../../src/orm/query/filter-ast.js';
import type { FilterNode, FilterValue } from '../../src/orm/query/filter-ast.js';
import {
  MAX_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  MAX_LIST_ITEMS,
  MAX_LITERAL_LENGTH,
  parseFilter,
} from '../../src/orm/query/filter-parser.js';

/** A condition node as the parser builds it. */
function cond(path: string, value: FilterValue, position: number): FilterNode {
  return { kind: 'condition', segments: path.split('__'), value, position };
}

/** The value of the single condition in `Q(f=<valueText>)`. */
function valueOf(valueText: string): FilterValue {
  const node = parseFilter(`Q(f=${valueText})`);
  if (node.kind !== 'condition') throw new Error(`expected a condition, got ${node.kind}`);
  return node.value;
}

/** Parse `text`, expecting a QuerySyntaxError, and return it. */
function syntaxError(text: string): QuerySyntaxError {
  try {
    parseFilter(text);
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    return error as QuerySyntaxError;
  }
  throw new Error(`expected ${JSON.stringify(text.slice(0, 80))} to be rejected`);
}

/** Expect `text` to fail at `position` with a message containing every one of `fragments`. */
function expectError(text: string, position: number, ...fragments: string[]): QuerySyntaxError {
  const error = syntaxError(text);
  expect(error.position).toBe(position);
  expect(error.message).toContain(`(at position ${position})`);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error;
}

describe('parseFilter: conditions and Q calls', () => {
  it('parses a single-argument Q into the condition node itself', () => {
    expect(parseFilter("Q(name='Acme')")).toEqual(cond('name', 'Acme', 2));
  });

  it('parses Q() with no arguments into an all node', () => {
    expect(parseFilter('Q()')).toEqual({ kind: 'all' });
    expect(parseFilter('  Q (  )  ')).toEqual({ kind: 'all' });
  });

  it('ANDs several arguments of one Q into a single and node', () => {
    expect(parseFilter("Q(a=1, b='x', c=None)")).toEqual({
      kind: 'and',
      children: [cond('a', 1, 2), cond('b', 'x', 7), cond('c', null, 14)],
    });
  });

  it('keeps repeated arguments as separate conditions', () => {
    expect(parseFilter('Q(a=1,a=2)')).toEqual({ kind: 'and', children: [cond('a', 1, 2), cond('a', 2, 6)] });
  });

  it('splits a field path on double underscores, keeping the segments as written', () => {
    expect(parseFilter("Q(stage__name__icontains='won')")).toEqual(cond('stage__name__icontains', 'won', 2));
    const node = parseFilter('Q(partner_id__parent_id__country_code=1)');
    expect(node).toEqual({
      kind: 'condition', segments: ['partner_id', 'parent_id', 'country_code'], value: 1, position: 2,
    });
  });

  it('passes every lookup name through as the last segment without interpreting it', () => {
    for (const lookup of LOOKUPS) {
      expect(parseFilter(`Q(order__partner__${lookup}=1)`)).toEqual({
        kind: 'condition', segments: ['order', 'partner', lookup], value: 1, position: 2,
      });
    }
  });

  it('passes unknown trailing segments through too, since lookups are resolved against the model later', () => {
    expect(parseFilter('Q(a__bogus=1)')).toEqual(cond('a__bogus', 1, 2));
  });

  it('accepts names with leading underscores, digits and a single underscore segment like Python does', () => {
    expect(parseFilter('Q(_private__x2=1)')).toEqual({
      kind: 'condition', segments: ['_private', 'x2'], value: 1, position: 2,
    });
    // Three underscores split as '__' then '_b' (Python's str.split behaves the same way).
    expect(parseFilter('Q(a___b=1)')).toEqual({ kind: 'condition', segments: ['a', '_b'], value: 1, position: 2 });
  });

  it('records the position of the field path of each condition', () => {
    const text = '  Q( a=1 ,\n\tbb = 2 )';
    expect(parseFilter(text)).toEqual({
      kind: 'and',
      children: [cond('a', 1, 5), cond('bb', 2, 12)],
    });
    expect(text.indexOf('bb')).toBe(12);
  });

  it('allows spaces, tabs and newlines between every token', () => {
    const text = "\n ( ~ Q ( a = [ 1 , 2 , ] ) \t|\r\n Q ( b = ( 'x' , ) ) ) & Q ( c = True ) \n";
    expect(parseFilter(text)).toEqual({
      kind: 'and',
      children: [
        {
          kind: 'or',
          children: [
            { kind: 'not', child: cond('a', [1, 2], text.indexOf('a =')) },
            cond('b', ['x'], text.indexOf('b =')),
          ],
        },
        cond('c', true, text.indexOf('c =')),
      ],
    });
  });

  it('returns frozen nodes', () => {
    const node = parseFilter('Q(a=[1], b=2) | ~Q(c=3)');
    expect(Object.isFrozen(node)).toBe(true);
    if (node.kind !== 'or') throw new Error('expected or');
    expect(Object.isFrozen(node.children)).toBe(true);
    const first = node.children[0];
    if (first?.kind !== 'and') throw new Error('expected and');
    const condition = first.children[0];
    if (condition?.kind !== 'condition') throw new Error('expected condition');
    expect(Object.isFrozen(condition.segments)).toBe(true);
    expect(Object.isFrozen(condition.value)).toBe(true);
  });
});

describe('parseFilter: values', () => {
  it('parses single- and double-quoted strings', () => {
    expect(valueOf("'hello'")).toBe('hello');
    expect(valueOf('"hello"')).toBe('hello');
    expect(valueOf("''")).toBe('');
    expect(valueOf('""')).toBe('');
    expect(valueOf('"it\'s"')).toBe("it's");
    expect(valueOf("'say \"hi\"'")).toBe('say "hi"');
  });

  it('decodes every supported backslash escape', () => {
    expect(valueOf(String.raw`'a\\b'`)).toBe('a\\b');
    expect(valueOf(String.raw`'it\'s'`)).toBe("it's");
    expect(valueOf(String.raw`"\"q\""`)).toBe('"q"');
    expect(valueOf(String.raw`'\"'`)).toBe('"');
    expect(valueOf(String.raw`"\'"`)).toBe("'");
    expect(valueOf(String.raw`'line1\nline2\tx\ry'`)).toBe('line1\nline2\tx\ry');
    expect(valueOf(String.raw`'\u00e9t\u00C9'`)).toBe('étÉ');
    expect(valueOf(String.raw`'\ud83d\ude00'`)).toBe('😀');
    expect(valueOf(String.raw`'\\n is not a newline'`)).toBe('\\n is not a newline');
  });

  it('keeps non-ASCII characters and raw newlines inside strings', () => {
    expect(valueOf("'Zürich 😀\nsecond line'")).toBe('Zürich 😀\nsecond line');
  });

  it('parses integers, decimals, negatives and exponents as JS numbers', () => {
    expect(valueOf('0')).toBe(0);
    expect(valueOf('42')).toBe(42);
    expect(valueOf('-7')).toBe(-7);
    expect(valueOf('3.25')).toBe(3.25);
    expect(valueOf('-0.5')).toBe(-0.5);
    expect(valueOf('1e3')).toBe(1000);
    expect(valueOf('1.5E-2')).toBe(0.015);
    expect(valueOf('2e+2')).toBe(200);
    expect(valueOf('007')).toBe(7);
    expect(valueOf('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(valueOf('-9007199254740991')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(valueOf('1e300')).toBe(1e300);
  });

  it('normalises negative zero to zero', () => {
    expect(Object.is(valueOf('-0'), 0)).toBe(true);
    expect(Object.is(valueOf('-0.0'), 0)).toBe(true);
  });

  it('parses the boolean and null keywords in both Python and JSON spelling', () => {
    expect(valueOf('True')).toBe(true);
    expect(valueOf('true')).toBe(true);
    expect(valueOf('False')).toBe(false);
    expect(valueOf('false')).toBe(false);
    expect(valueOf('None')).toBeNull();
    expect(valueOf('null')).toBeNull();
  });

  it('parses every variable into a variable reference', () => {
    for (const variable of VARIABLES) {
      expect(valueOf(variable)).toEqual({ variable });
    }
    expect(parseFilter('Q(user_id=user_id)')).toEqual(cond('user_id', { variable: 'user_id' }, 2));
  });

  it('parses square-bracket lists, including empty, nested, mixed and trailing-comma lists', () => {
    expect(valueOf('[]')).toEqual([]);
    expect(valueOf('[1]')).toEqual([1]);
    expect(valueOf('[1, 2, 3]')).toEqual([1, 2, 3]);
    expect(valueOf('[1, 2,]')).toEqual([1, 2]);
    expect(valueOf("['a', 2, None, True, today, [3, (4,)]]")).toEqual([
      'a', 2, null, true, { variable: 'today' }, [3, [4]],
    ]);
  });

  it('parses parenthesised tuples into lists, including single-element and trailing-comma tuples', () => {
    expect(valueOf('(1,)')).toEqual([1]);
    expect(valueOf('(1, 2)')).toEqual([1, 2]);
    expect(valueOf('(1, 2,)')).toEqual([1, 2]);
    expect(valueOf("('a', [1, 2], company_ids)")).toEqual(['a', [1, 2], { variable: 'company_ids' }]);
    expect(parseFilter('Q(amount__range=(10, 20.5))')).toEqual(cond('amount__range', [10, 20.5], 2));
  });

  it('preserves SQL fragments inside strings verbatim as plain values', () => {
    const hostile = [
      "'; DROP TABLE x; --",
      "1' OR '1'='1",
      '") OR 1=1 --',
      'Q(a=1) | Q(b=2)',
      '/* comment */ SELECT * FROM res_users',
      "x\\'; DELETE FROM t",
    ];
    for (const raw of hostile) {
      const escaped = raw.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
      expect(parseFilter(`Q(name='${escaped}')`)).toEqual(cond('name', raw, 2));
    }
    expect(parseFilter(`Q(name__in=["'; DROP TABLE x; --", 'a'])`)).toEqual(
      cond('name__in', ["'; DROP TABLE x; --", 'a'], 2),
    );
  });
});

describe('parseFilter: operators, precedence and flattening', () => {
  const a = cond('a', 1, 2);

  it('parses ~ into a not node', () => {
    expect(parseFilter('~Q(a=1)')).toEqual({ kind: 'not', child: cond('a', 1, 3) });
  });

  it('keeps double negation as two not nodes', () => {
    expect(parseFilter('~~Q(a=1)')).toEqual({ kind: 'not', child: { kind: 'not', child: cond('a', 1, 4) } });
  });

  it('parses & and | into and and or nodes', () => {
    expect(parseFilter('Q(a=1)&Q(b=2)')).toEqual({ kind: 'and', children: [a, cond('b', 2, 9)] });
    expect(parseFilter('Q(a=1)|Q(b=2)')).toEqual({ kind: 'or', children: [a, cond('b', 2, 9)] });
  });

  it('flattens a chain of the same operator into one node', () => {
    expect(parseFilter('Q(a=1) & Q(b=2) & Q(c=3) & Q(d=4)')).toEqual({
      kind: 'and',
      children: [a, cond('b', 2, 11), cond('c', 3, 20), cond('d', 4, 29)],
    });
    expect(parseFilter('Q(a=1) | Q(b=2) | Q(c=3)')).toEqual({
      kind: 'or',
      children: [a, cond('b', 2, 11), cond('c', 3, 20)],
    });
  });

  it('does not merge explicitly parenthesised groups or multi-argument Qs into the chain', () => {
    expect(parseFilter('(Q(a=1) & Q(b=2)) & Q(c=3)')).toEqual({
      kind: 'and',
      children: [{ kind: 'and', children: [cond('a', 1, 3), cond('b', 2, 12)] }, cond('c', 3, 22)],
    });
    expect(parseFilter('Q(a=1, b=2) & Q(c=3)')).toEqual({
      kind: 'and',
      children: [{ kind: 'and', children: [a, cond('b', 2, 7)] }, cond('c', 3, 16)],
    });
  });

  it('binds & tighter than |', () => {
    expect(parseFilter('Q(a=1) | Q(b=2) & Q(c=3)')).toEqual({
      kind: 'or',
      children: [a, { kind: 'and', children: [cond('b', 2, 11), cond('c', 3, 20)] }],
    });
    expect(parseFilter('Q(a=1) & Q(b=2) | Q(c=3)')).toEqual({
      kind: 'or',
      children: [{ kind: 'and', children: [a, cond('b', 2, 11)] }, cond('c', 3, 20)],
    });
  });

  it('binds ~ tighter than & and |', () => {
    expect(parseFilter('~Q(a=1) & Q(b=2)')).toEqual({
      kind: 'and',
      children: [{ kind: 'not', child: cond('a', 1, 3) }, cond('b', 2, 12)],
    });
    expect(parseFilter('Q(a=1) | ~Q(b=2)')).toEqual({
      kind: 'or',
      children: [a, { kind: 'not', child: cond('b', 2, 12) }],
    });
  });

  it('lets parentheses override precedence', () => {
    expect(parseFilter('(Q(a=1) | Q(b=2)) & Q(c=3)')).toEqual({
      kind: 'and',
      children: [{ kind: 'or', children: [cond('a', 1, 3), cond('b', 2, 12)] }, cond('c', 3, 22)],
    });
    expect(parseFilter('~(Q(a=1) | Q(b=2))')).toEqual({
      kind: 'not',
      child: { kind: 'or', children: [cond('a', 1, 4), cond('b', 2, 13)] },
    });
  });

  it('treats redundant parentheses as transparent', () => {
    expect(parseFilter('((Q(a=1)))')).toEqual(cond('a', 1, 4));
  });

  it('accepts nesting exactly at the depth limit', () => {
    const depth = MAX_FILTER_DEPTH;
    expect(parseFilter(`${'('.repeat(depth)}Q(a=1)${')'.repeat(depth)}`)).toEqual(cond('a', 1, depth + 2));
    const nots = parseFilter(`${'~'.repeat(depth)}Q(a=1)`);
    let node: FilterNode = nots;
    for (let i = 0; i < depth; i++) {
      expect(node.kind).toBe('not');
      if (node.kind !== 'not') break;
      node = node.child;
    }
    expect(node).toEqual(cond('a', 1, depth + 2));
    expect(valueOf(`${'['.repeat(depth)}${']'.repeat(depth)}`)).toBeInstanceOf(Array);
  });
});

describe('parseFilter: syntax errors', () => {
  it('rejects empty and whitespace-only text', () => {
    expectError('', 0, 'Empty filter expression');
    expectError('  \n\t ', 0, 'Empty filter expression');
  });

  it('raises QuerySyntaxError with a 400 status', () => {
    const error = syntaxError('Q(');
    expect(error.status).toBe(400);
    expect(error.name).toBe('QuerySyntaxError');
  });

  it('rejects unknown bare words as values, naming the word and its position', () => {
    expectError('Q(a=DROP)', 4, "Unknown value 'DROP'");
    expectError('Q(a=hello)', 4, "Unknown value 'hello'");
    expectError('Q(a=TRUE)', 4, "Unknown value 'TRUE'");
    expectError('Q(a=NULL)', 4, "Unknown value 'NULL'");
    expectError('Q(a=Q)', 4, "Unknown value 'Q'");
    expectError('Q(a=[1, bogus])', 8, "Unknown value 'bogus'");
  });

  it('rejects SQL written outside strings', () => {
    expectError("Q(a=1) OR 1=1", 7, "Trailing input after expression: 'OR 1=1'");
    expectError("Q(a=1); DROP TABLE x; --", 6, "Unexpected character ';'");
    expectError('Q(a=1 OR 1=1)', 6, "Expected ',' or ')'", "'OR'");
    expectError('Q(a=1) -- comment', 7, "Unexpected character '-'");
    expectError("SELECT * FROM x", 0, "Unexpected 'SELECT'", 'expected Q(...)');
    expectError("Q(a=1) /* x */", 7, "Unexpected character '/'");
    expectError("Q(a=1 UNION SELECT 1)", 6, "'UNION'");
  });

  it('rejects stray characters', () => {
    expectError('Q(a=1) ; Q(b=2)', 7, "Unexpected character ';'");
    expectError('Q(a=$x)', 4, "Unexpected character '$'");
    expectError('Q(a.b=1)', 3, "Unexpected character '.'");
    expectError('Q(a=1)\u00a0', 6, "Unexpected character '\u00a0'");
    expectError('Q(é=1)', 2, "Unexpected character 'é'");
    expectError('Q(a=1) && Q(b=2)', 8, "Unexpected '&'");
    expectError('Q(a=1) || Q(b=2)', 8, "Unexpected '|'");
    expectError('Q(a=1) ! Q(b=2)', 7, "Unexpected character '!'");
  });

  it('rejects a missing closing parenthesis, pointing at the unclosed one', () => {
    expectError('Q(a=1', 1, "Unbalanced parentheses: '(' is never closed");
    expectError('(Q(a=1)', 0, "Unbalanced parentheses: '(' is never closed");
    expectError('((Q(a=1) | Q(b=2))', 0, "Unbalanced parentheses: '(' is never closed");
    expectError('Q(a=(1, 2', 4, "Unbalanced parentheses: '(' is never closed");
    expectError('Q(a=[1, 2', 4, "Unbalanced brackets: '[' is never closed");
    expectError('Q(a=[', 4, "Unbalanced brackets: '[' is never closed");
  });

  it('rejects an extra closing parenthesis', () => {
    expectError('Q(a=1))', 6, "Unbalanced parentheses: ')' has no matching '('");
    expectError('(Q(a=1)))', 8, "Unbalanced parentheses: ')' has no matching '('");
    expectError(')Q(a=1)', 0, "Unexpected ')'");
    expectError('Q(a=1) & )', 9, "Unexpected ')'");
    expectError('Q(a=1])', 5, "Expected ',' or ')'", "found ']'");
    expectError('Q(a=[1)])', 6, "Expected ',' or ']' in list, found ')'");
  });

  it('rejects a group closed by something other than a parenthesis', () => {
    expectError('(Q(a=1) Q(b=2))', 8, "Expected ')' to close the '(' at position 0", "found 'Q'");
  });

  it('rejects malformed Q calls', () => {
    expectError('Q(=1)', 2, "Expected a field name but found '='");
    expectError('Q(a)', 3, "Expected '=' after field path 'a', found ')'");
    expectError("Q(stage__name 'won')", 14, "Expected '=' after field path 'stage__name'", "found \"'won'\"");
    expectError('Q(a==1)', 4, "Expected a value but found '='");
    expectError('Q(a=)', 4, "Expected a value but found ')'");
    expectError('Q(a=1,)', 6, "Expected a field name but found ')'");
    expectError('Q(,)', 2, "Expected a field name but found ','");
    expectError('Q(a=1 b=2)', 6, "Expected ',' or ')' after argument", "found 'b'");
    expectError("Q('a'=1)", 2, "Expected a field name but found \"'a'\"");
    expectError('Q(1=1)', 2, "Expected a field name but found '1'");
    expectError('Q a=1', 2, "Expected '(' after 'Q', found 'a'");
    expectError('q(a=1)', 0, "Unexpected 'q'");
    expectError('Q', 1, 'Unexpected end of expression', "expected '(' after 'Q'");
    expectError('Q(', 2, 'Unexpected end of expression', 'expected a field name');
    expectError('Q(a', 3, 'Unexpected end of expression', "expected '=' after field path 'a'");
    expectError('Q(a=', 4, 'Unexpected end of expression', 'expected a value');
    expectError('Q(a=Q(b=1))', 4, "Unknown value 'Q'");
  });

  it('rejects dangling and leading operators', () => {
    expectError('Q(a=1) &', 8, 'Unexpected end of expression');
    expectError('Q(a=1) |', 8, 'Unexpected end of expression');
    expectError('~', 1, 'Unexpected end of expression');
    expectError('& Q(a=1)', 0, "Unexpected '&'");
    expectError('| Q(a=1)', 0, "Unexpected '|'");
    expectError('Q(a=1) & | Q(b=2)', 9, "Unexpected '|'");
    expectError('Q(a=1) ~ Q(b=2)', 7, "Trailing input after expression: '~ Q(b=2)'");
    expectError('()', 1, "Unexpected ')'");
  });

  it('rejects two expressions without an operator between them', () => {
    expectError('Q(a=1) Q(b=2)', 7, "Trailing input after expression: 'Q(b=2)'");
    expectError('Q(a=1) (Q(b=2))', 7, "Trailing input after expression: '(Q(b=2))'");
  });

  it('rejects bare values and lists outside of Q', () => {
    expectError('True', 0, "Unexpected 'True'");
    expectError("'x'", 0, "Unexpected \"'x'\"");
    expectError('1', 0, "Unexpected '1'");
    expectError('[Q(a=1)]', 0, "Unexpected '['");
  });

  it('rejects empty segments in field paths', () => {
    expectError('Q(a____b=1)', 2, "Empty segment in field path 'a____b'");
    expectError('Q(__a=1)', 2, "Empty segment in field path '__a'");
    expectError('Q(a__=1)', 2, "Empty segment in field path 'a__'");
    expectError('Q(x=1, a__b__=1)', 7, "Empty segment in field path 'a__b__'");
    expectError('Q(__=1)', 2, "Empty segment in field path '__'");
  });

  it('rejects an unterminated string at its opening quote', () => {
    expectError("Q(a='abc)", 4, 'Unterminated string', "abc)");
    expectError('Q(a="abc)', 4, 'Unterminated string', 'abc)');
    expectError(String.raw`Q(a='abc\')`, 4, 'Unterminated string');
    expectError("Q(a='abc\\", 4, 'Unterminated string');
    expectError(`Q(a='${'x'.repeat(500)}`, 4, 'Unterminated string', `'${'x'.repeat(29)}…`);
  });

  it('rejects invalid escapes at the backslash', () => {
    expectError(String.raw`Q(a='x\qy')`, 6, String.raw`Invalid escape '\q'`);
    expectError(String.raw`Q(a='\x41')`, 5, String.raw`Invalid escape '\x'`);
    expectError(String.raw`Q(a='\u12G4')`, 5, String.raw`Invalid unicode escape '\u12G4'`);
    expectError(String.raw`Q(a='\u12')`, 5, 'Invalid unicode escape');
    expectError(String.raw`Q(a='\u12`, 5, 'Invalid unicode escape');
  });

  it('rejects malformed numbers', () => {
    expectError('Q(a=1.)', 4, "Invalid number '1.'");
    expectError('Q(a=1.2.3)', 4, "Invalid number '1.2.3'");
    expectError('Q(a=1e)', 4, "Invalid number '1e'");
    expectError('Q(a=1e+)', 4, "Invalid number '1e+'");
    expectError('Q(a=12abc)', 4, "Invalid number '12abc'");
    expectError('Q(a=0x1F)', 4, "Invalid number '0x1F'");
    expectError('Q(a=.5)', 4, "Unexpected character '.'");
    expectError('Q(a=- 5)', 4, "Unexpected character '-'");
    expectError('Q(a=--5)', 4, "Unexpected character '-'");
    expectError('Q(a=+5)', 4, "Unexpected character '+'");
  });

  it('rejects non-finite numbers and integers beyond the safe range', () => {
    expectError('Q(a=1e400)', 4, "Number '1e400' is out of range");
    expectError('Q(a=-1e400)', 4, "Number '-1e400' is out of range");
    expectError('Q(a=9007199254740992)', 4, "Integer '9007199254740992' is too large");
    expectError('Q(a=-9007199254740992)', 4, "Integer '-9007199254740992' is too large");
    expectError(`Q(a=${'9'.repeat(400)})`, 4, 'is out of range');
  });

  it('rejects a parenthesised single value without a comma, pointing at the closing parenthesis', () => {
    expectError('Q(a=(1))', 6, "Unexpected ')'", 'needs a comma');
    expectError("Q(a__in=('x'))", 12, "Unexpected ')'", 'needs a comma');
    expectError('Q(a=())', 5, "Unexpected ')'", 'empty tuple');
    expectError('Q(a=(1 2))', 7, "Expected ',' or ')' in tuple, found '2'");
    expectError('Q(a=[1 2])', 7, "Expected ',' or ']' in list, found '2'");
    expectError('Q(a=[,])', 5, "Expected a value but found ','");
    expectError('Q(a=[1,,2])', 7, "Expected a value but found ','");
    expectError('Q(a=(,))', 5, "Expected a value but found ','");
  });

  it('truncates long offending tokens in messages to about 30 characters', () => {
    const word = `W${'x'.repeat(200)}`;
    const error = expectError(`Q(a=${word})`, 4, `Unknown value '${word.slice(0, 30)}…'`);
    expect(error.message.length).toBeLessThan(300);
    const trailing = expectError(`Q(a=1) ${'Q(b=1) '.repeat(50)}`, 7, 'Trailing input after expression');
    expect(trailing.message).toContain(`'${'Q(b=1) '.repeat(50).slice(0, 30)}…'`);
  });

  it('shows control characters in quoted tokens visibly', () => {
    expectError('Q(a=1)\u0000', 6, String.raw`Unexpected character '\u0000'`);
    expectError('Q(a=1)\u000b', 6, String.raw`Unexpected character '\u000b'`);
  });

  it('rejects a non-string argument', () => {
    const error = (() => {
      try {
        parseFilter(42 as unknown as string);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(QuerySyntaxError);
    expect((error as QuerySyntaxError).message).toContain('must be a string');
  });
});

describe('parseFilter: safety limits', () => {
  it('exports the documented limits', () => {
    expect(MAX_FILTER_LENGTH).toBe(100_000);
    expect(MAX_FILTER_DEPTH).toBe(64);
    expect(MAX_LIST_ITEMS).toBe(10_000);
    expect(MAX_CONDITIONS).toBe(1_000);
    expect(MAX_LITERAL_LENGTH).toBe(1_000);
  });

  it('rejects a 1 MB filter before tokenizing it', () => {
    const text = `Q(a='${'x'.repeat(1_000_000)}')`;
    const started = performance.now();
    const error = syntaxError(text);
    expect(performance.now() - started).toBeLessThan(50);
    expect(error.message).toContain(`Filter expression is too long (${text.length} characters, at most 100000)`);
    expect(error.position).toBe(MAX_FILTER_LENGTH);
  });

  it('rejects text one character over the length limit even when it would otherwise be garbage', () => {
    expectError('$'.repeat(MAX_FILTER_LENGTH + 1), MAX_FILTER_LENGTH, 'Filter expression is too long (100001 characters');
  });

  it('accepts text exactly at the length limit', () => {
    // Strings of the longest accepted length, then spaces up to the limit.
    const item = `'${'x'.repeat(MAX_LITERAL_LENGTH)}'`;
    const head = `Q(a__in=[${Array.from({ length: 90 }, () => item).join(',')}])`;
    const text = head.padEnd(MAX_FILTER_LENGTH, ' ');
    expect(text.length).toBe(MAX_FILTER_LENGTH);
    expect(parseFilter(text)).toEqual(cond('a__in', Array.from({ length: 90 }, () => 'x'.repeat(MAX_LITERAL_LENGTH)), 2));
  });

  it('accepts a string of the longest length and refuses one character more, at the string', () => {
    const longest = 'é'.repeat(MAX_LITERAL_LENGTH);
    expect(parseFilter(`Q(a='${longest}')`)).toEqual(cond('a', longest, 2));
    // Characters are code points: 1,000 emoji are 2,000 UTF-16 units and still one string of 1,000.
    expect(parseFilter(`Q(a='${'😀'.repeat(MAX_LITERAL_LENGTH)}')`)).toEqual(cond('a', '😀'.repeat(MAX_LITERAL_LENGTH), 2));
    expectError(`Q(a=1) | Q(b="${'y'.repeat(MAX_LITERAL_LENGTH + 1)}")`, 13,
      `String '${'y'.repeat(30)}…' is too long (${MAX_LITERAL_LENGTH + 1} characters, at most ${MAX_LITERAL_LENGTH})`);
    // Escapes count once they are decoded.
    expectError(`Q(a='${'\\u0041'.repeat(MAX_LITERAL_LENGTH + 1)}')`, 4, `is too long (${MAX_LITERAL_LENGTH + 1} characters`);
  });

  it('rejects 10,000 nested parentheses quickly with a depth error instead of overflowing the stack', () => {
    const text = `${'('.repeat(10_000)}Q(a=1)${')'.repeat(10_000)}`;
    const started = performance.now();
    const error = expectError(text, MAX_FILTER_DEPTH, 'Filter expression is nested too deeply (more than 64 levels)');
    expect(performance.now() - started).toBeLessThan(50);
    expect(error).not.toBeInstanceOf(RangeError);
  });

  it('rejects 10,000 unclosed parentheses with the depth error too', () => {
    expectError('('.repeat(10_000), MAX_FILTER_DEPTH, 'nested too deeply');
  });

  it('rejects nesting one level beyond the limit at the token that crosses it', () => {
    const over = MAX_FILTER_DEPTH + 1;
    expectError(`${'('.repeat(over)}Q(a=1)${')'.repeat(over)}`, MAX_FILTER_DEPTH, 'nested too deeply');
    expectError(`${'~'.repeat(over)}Q(a=1)`, MAX_FILTER_DEPTH, 'nested too deeply');
    expectError(`${'~'.repeat(50_000)}Q(a=1)`, MAX_FILTER_DEPTH, 'nested too deeply');
    expectError(`Q(a=${'['.repeat(over)}${']'.repeat(over)})`, 4 + MAX_FILTER_DEPTH, 'nested too deeply');
    expectError(`Q(a=${'('.repeat(10_000)})`, 4 + MAX_FILTER_DEPTH, 'nested too deeply');
  });

  it('counts parentheses, brackets and ~ together towards the depth limit', () => {
    // 32 × '~(' = 64 levels, then a list bracket makes 65.
    const prefix = '~('.repeat(32);
    expect(() => parseFilter(`${prefix}Q(a=1)${')'.repeat(32)}`)).not.toThrow();
    expectError(`${prefix}Q(a=[1])${')'.repeat(32)}`, prefix.length + 4, 'nested too deeply');
  });

  it('accepts a list of exactly the maximum number of items and rejects one more', () => {
    const items = Array.from({ length: MAX_LIST_ITEMS }, (_, i) => i);
    const node = parseFilter(`Q(id__in=[${items.join(',')}])`);
    expect(node).toEqual(cond('id__in', items, 2));
    const text = `Q(id__in=[${items.join(',')},7])`;
    expectError(text, text.length - 3, 'The list has too many items (more than 10000)');
    const tuple = `Q(id__in=(${items.join(',')},7))`;
    expectError(tuple, tuple.length - 3, 'The tuple has too many items (more than 10000)');
  });

  it('accepts the maximum number of conditions and rejects one more', () => {
    const ok = Array.from({ length: MAX_CONDITIONS }, (_, i) => `Q(a=${i})`).join('|');
    const node = parseFilter(ok);
    expect(node.kind).toBe('or');
    if (node.kind === 'or') expect(node.children).toHaveLength(MAX_CONDITIONS);
    const tooMany = `${ok}|Q(zz=1)`;
    expectError(tooMany, tooMany.indexOf('zz='), 'Filter expression has too many conditions (more than 1000)');
    const args = Array.from({ length: MAX_CONDITIONS + 1 }, (_, i) => `f${i}=1`).join(',');
    expectError(`Q(${args})`, 2 + args.lastIndexOf('f1000'), 'too many conditions');
  });

  it('parses a 99,000-character expression with a long list of strings in well under 50 ms', () => {
    const strings: string[] = [];
    let length = 'Q(name__in=[])'.length;
    for (let i = 0; length < 99_000; i++) {
      const item = `'name number ${i}'`;
      strings.push(item);
      length += item.length + 1;
    }
    const text = `Q(name__in=[${strings.join(',')}])`;
    expect(text.length).toBeGreaterThanOrEqual(99_000);
    expect(text.length).toBeLessThanOrEqual(MAX_FILTER_LENGTH);
    parseFilter(text); // warm up
    const started = performance.now();
    const node = parseFilter(text);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(50);
    expect(node).toEqual(cond('name__in', strings.map((s) => s.slice(1, -1)), 2));
  });

  it('parses long strings full of escapes in linear time', () => {
    const item = `'${'\\n\\u0041'.repeat(MAX_LITERAL_LENGTH / 2)}'`;
    const text = `Q(a__in=[${Array.from({ length: 24 }, () => item).join(',')}])`;
    expect(text.length).toBeLessThanOrEqual(MAX_FILTER_LENGTH);
    parseFilter(text); // warm up
    const started = performance.now();
    const node = parseFilter(text);
    expect(performance.now() - started).toBeLessThan(50);
    expect(node).toEqual(cond('a__in', Array.from({ length: 24 }, () => '\nA'.repeat(MAX_LITERAL_LENGTH / 2)), 2));
  });

  it('parses a wide and/or expression near the condition limit quickly', () => {
    const text = Array.from({ length: 500 }, (_, i) => `(Q(a=${i}) & ~Q(b__in=[1,2,3]))`).join(' | ');
    parseFilter(text); // warm up
    const started = performance.now();
    const node = parseFilter(text);
    expect(performance.now() - started).toBeLessThan(50);
    expect(node.kind).toBe('or');
    if (node.kind === 'or') expect(node.children).toHaveLength(500);
  });
});
