/**
 * Parser for Q-expressions (ARCHITECTURE §4): turns filter text such as
 *
 *     Q(stage__name__icontains='won') & ~(Q(amount__lt=100) | Q(owner=user_id))
 *
 * into the immutable AST of `filter-ast.ts`. It is a hand-written lazy tokenizer plus a
 * recursive-descent parser; the text is never evaluated. Grammar:
 *
 *     expr   := or
 *     or     := and ('|' and)*
 *     and    := not ('&' not)*
 *     not    := '~' not | '(' expr ')' | call
 *     call   := 'Q' '(' [arg (',' arg)*] ')'          several args in one Q are ANDed
 *     arg    := path '=' value                         path := name ('__' name)*
 *     value  := string | number | True | False | None | true | false | null | list | variable
 *     list   := '[' [value (',' value)*] [','] ']'  |  '(' value ',' [value (',' value)*] [','] ')'
 *     variable := user_id | company_id | company_ids | today | now
 *
 * Hostile input is bounded: the text length, the nesting depth (so recursion can never overflow
 * the stack), the length of a string, the items of one list and the number of conditions are all capped, and the whole
 * parse is linear in the length of the text. Every error is a `QuerySyntaxError` that quotes the
 * offending token and carries its 0-based position.
 */
import { QuerySyntaxError } from '../../errors.js';
import type { ConditionNode, FilterNode, FilterValue, FilterVariable } from './filter-ast.js';
import { charactersBeyond } from '../fields/storable-text.js';

/** Longest filter text accepted, in characters (UTF-16 code units). */
export const MAX_FILTER_LENGTH = 100_000;
/** Deepest nesting of `(`, `[`, tuple parentheses and `~` accepted. */
export const MAX_FILTER_DEPTH = 64;
/** Most values accepted in one list or tuple. */
export const MAX_LIST_ITEMS = 10_000;
/** Most `path=value` conditions accepted in one filter. */
export const MAX_CONDITIONS = 1_000;
/**
 * Longest string literal accepted, in characters (after escapes). PostgreSQL matches a pattern
 * (`icontains`) in time proportional to its length for every row: a 100,000-character literal
 * kept a worker's statement busy for seconds over the 3,715 states, while 1,000 characters
 * cost about as much as any ordinary term. Name-search terms share the bound.
 */
export const MAX_LITERAL_LENGTH = 1_000;

/** How much of an offending token an error message quotes. */
const MAX_QUOTED = 30;

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

type Punct = '(' | ')' | '[' | ']' | ',' | '=' | '&' | '|' | '~';

type Token =
  | { readonly type: 'name'; readonly start: number; readonly end: number; readonly name: string }
  | { readonly type: 'string'; readonly start: number; readonly end: number; readonly value: string }
  | { readonly type: 'number'; readonly start: number; readonly end: number; readonly value: number }
  | { readonly type: 'punct'; readonly start: number; readonly end: number; readonly char: Punct }
  | { readonly type: 'eof'; readonly start: number; readonly end: number };

const CH_TAB = 0x09;
const CH_LF = 0x0a;
const CH_CR = 0x0d;
const CH_SPACE = 0x20;
const CH_DQUOTE = 0x22;
const CH_SQUOTE = 0x27;
const CH_PLUS = 0x2b;
const CH_MINUS = 0x2d;
const CH_DOT = 0x2e;
const CH_0 = 0x30;
const CH_9 = 0x39;
const CH_BACKSLASH = 0x5c;
const CH_UNDERSCORE = 0x5f;

const PUNCT: Readonly<Record<string, Punct>> = {
  '(': '(', ')': ')', '[': '[', ']': ']', ',': ',', '=': '=', '&': '&', '|': '|', '~': '~',
};

function isDigit(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}

function isNameStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === CH_UNDERSCORE;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || isDigit(c);
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isSpace(c: number): boolean {
  return c === CH_SPACE || c === CH_TAB || c === CH_LF || c === CH_CR;
}

/**
 * Quote a fragment of source text for an error message: truncated to about 30 characters,
 * control characters made visible, wrapped in single quotes (double quotes when the fragment
 * itself contains a single quote and no double quote).
 */
function quote(fragment: string): string {
  let shown = fragment;
  if (shown.length > MAX_QUOTED) {
    let cut = MAX_QUOTED;
    const last = shown.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut -= 1; // do not split a surrogate pair
    shown = `${shown.slice(0, cut)}…`;
  }
  // Display only: make control characters visible. (Never builds code.)
  shown = shown.replace(/[\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\n': return '\\n';
      case '\t': return '\\t';
      case '\r': return '\\r';
      default: return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
  return shown.includes("'") && !shown.includes('"') ? `"${shown}"` : `'${shown}'`;
}

/** A one-token-lookahead tokenizer that lexes on demand, so the first error in reading order wins. */
class Lexer {
  private pos = 0;
  private lookahead: Token | undefined;

  constructor(readonly text: string) {}

  peek(): Token {
    if (this.lookahead === undefined) this.lookahead = this.lex();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = undefined;
    return token;
  }

  /** The source text of a token, quoted for an error message. */
  show(token: Token): string {
    if (token.type === 'eof') return 'end of expression';
    return quote(this.text.slice(token.start, Math.min(token.end, token.start + MAX_QUOTED + 1)));
  }

  private lex(): Token {
    const text = this.text;
    const length = text.length;
    let i = this.pos;
    while (i < length && isSpace(text.charCodeAt(i))) i++;
    if (i >= length) {
      this.pos = length;
      return { type: 'eof', start: length, end: length };
    }
    const c = text.charCodeAt(i);
    let token: Token;
    if (isNameStart(c)) {
      let end = i + 1;
      while (end < length && isNameChar(text.charCodeAt(end))) end++;
      token = { type: 'name', start: i, end, name: text.slice(i, end) };
    } else if (isDigit(c) || (c === CH_MINUS && i + 1 < length && isDigit(text.charCodeAt(i + 1)))) {
      token = this.lexNumber(i);
    } else if (c === CH_SQUOTE || c === CH_DQUOTE) {
      token = this.lexString(i);
    } else {
      const char = PUNCT[text[i] as string];
      if (char === undefined) {
        const codePoint = text.codePointAt(i) as number;
        throw new QuerySyntaxError(
          `Unexpected character ${quote(String.fromCodePoint(codePoint))}`, i,
        );
      }
      token = { type: 'punct', start: i, end: i + 1, char };
    }
    this.pos = token.end;
    return token;
  }

  /** `-?digits(.digits)?([eE][+-]?digits)?`, not immediately followed by a name character or '.'. */
  private lexNumber(start: number): Token {
    const text = this.text;
    const length = text.length;
    let i = start;
    let integer = true;
    let valid = true;
    if (text.charCodeAt(i) === CH_MINUS) i++;
    while (i < length && isDigit(text.charCodeAt(i))) i++;
    if (i < length && text.charCodeAt(i) === CH_DOT) {
      integer = false;
      i++;
      if (i < length && isDigit(text.charCodeAt(i))) {
        while (i < length && isDigit(text.charCodeAt(i))) i++;
      } else {
        valid = false;
      }
    }
    if (valid && i < length && (text.charCodeAt(i) | 0x20) === 0x65 /* e or E */) {
      integer = false;
      i++;
      const sign = text.charCodeAt(i);
      if (sign === CH_PLUS || sign === CH_MINUS) i++;
      if (i < length && isDigit(text.charCodeAt(i))) {
        while (i < length && isDigit(text.charCodeAt(i))) i++;
      } else {
        valid = false;
      }
    }
    if (i < length && (isNameChar(text.charCodeAt(i)) || text.charCodeAt(i) === CH_DOT)) valid = false;
    if (!valid) {
      // Quote the whole malformed run (digits, letters, dots, exponent signs).
      let end = i;
      while (end < length) {
        const ch = text.charCodeAt(end);
        if (!isNameChar(ch) && ch !== CH_DOT && ch !== CH_PLUS && ch !== CH_MINUS) break;
        end++;
      }
      throw new QuerySyntaxError(`Invalid number ${quote(text.slice(start, Math.min(end, start + MAX_QUOTED + 1)))}`, start);
    }
    const raw = text.slice(start, i);
    let value = Number(raw);
    if (!Number.isFinite(value)) {
      throw new QuerySyntaxError(`Number ${quote(raw)} is out of range`, start);
    }
    if (integer && !Number.isSafeInteger(value)) {
      throw new QuerySyntaxError(
        `Integer ${quote(raw)} is too large (at most ${Number.MAX_SAFE_INTEGER} in magnitude)`, start,
      );
    }
    if (value === 0) value = 0; // normalise -0
    return { type: 'number', start, end: i, value };
  }

  /** A single- or double-quoted string with `\\ \' \" \n \t \r \uXXXX` escapes. */
  private lexString(start: number): Token {
    const text = this.text;
    const length = text.length;
    const quoteChar = text.charCodeAt(start);
    const parts: string[] = [];
    let chunkStart = start + 1;
    let i = start + 1;
    const unterminated = (): QuerySyntaxError =>
      new QuerySyntaxError(
        `Unterminated string ${quote(text.slice(start, Math.min(length, start + MAX_QUOTED + 1)))}`, start,
      );
    for (;;) {
      if (i >= length) throw unterminated();
      const c = text.charCodeAt(i);
      if (c === quoteChar) {
        parts.push(text.slice(chunkStart, i));
        const value = parts.length === 1 ? parts[0] as string : parts.join('');
        const length = charactersBeyond(value, MAX_LITERAL_LENGTH);
        if (length !== null) {
          throw new QuerySyntaxError(`String ${quote(value)} is too long (${length} characters, at most ${MAX_LITERAL_LENGTH})`, start);
        }
        return { type: 'string', start, end: i + 1, value };
      }
      if (c !== CH_BACKSLASH) {
        i++;
        continue;
      }
      parts.push(text.slice(chunkStart, i));
      if (i + 1 >= length) throw unterminated();
      const escape = text[i + 1] as string;
      switch (escape) {
        case '\\': case "'": case '"': parts.push(escape); i += 2; break;
        case 'n': parts.push('\n'); i += 2; break;
        case 't': parts.push('\t'); i += 2; break;
        case 'r': parts.push('\r'); i += 2; break;
        case 'u': {
          let code = 0;
          for (let k = 2; k < 6; k++) {
            const h = i + k < length ? text.charCodeAt(i + k) : -1;
            if (!isHexDigit(h)) {
              throw new QuerySyntaxError(
                `Invalid unicode escape ${quote(text.slice(i, Math.min(length, i + 6)))} in string (expected \\uXXXX)`, i,
              );
            }
            code = code * 16 + parseInt(text[i + k] as string, 16);
          }
          parts.push(String.fromCharCode(code));
          i += 6;
          break;
        }
        default: {
          const codePoint = text.codePointAt(i + 1) as number;
          throw new QuerySyntaxError(
            `Invalid escape ${quote(`\\${String.fromCodePoint(codePoint)}`)} in string`, i,
          );
        }
      }
      chunkStart = i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

const VARIABLE_NAMES: ReadonlySet<string> = new Set<FilterVariable>(['user_id', 'company_id', 'company_ids', 'today', 'now']);

const KEYWORD_VALUES: ReadonlyMap<string, FilterValue> = new Map<string, FilterValue>([
  ['True', true], ['true', true], ['False', false], ['false', false], ['None', null], ['null', null],
]);

function isPunct(token: Token, char: Punct): boolean {
  return token.type === 'punct' && token.char === char;
}

class Parser {
  private depth = 0;
  private conditions = 0;
  private readonly lexer: Lexer;

  constructor(text: string) {
    this.lexer = new Lexer(text);
  }

  parse(): FilterNode {
    const first = this.lexer.peek();
    if (first.type === 'eof') throw new QuerySyntaxError('Empty filter expression', 0);
    const node = this.parseOr();
    const rest = this.lexer.peek();
    if (rest.type !== 'eof') {
      if (isPunct(rest, ')')) {
        throw new QuerySyntaxError("Unbalanced parentheses: ')' has no matching '('", rest.start);
      }
      const text = this.lexer.text;
      throw new QuerySyntaxError(
        `Trailing input after expression: ${quote(text.slice(rest.start, rest.start + MAX_QUOTED + 1))}`,
        rest.start,
      );
    }
    return node;
  }

  // or := and ('|' and)*
  private parseOr(): FilterNode {
    const first = this.parseAnd();
    if (!isPunct(this.lexer.peek(), '|')) return first;
    const children: FilterNode[] = [first];
    while (isPunct(this.lexer.peek(), '|')) {
      this.lexer.next();
      children.push(this.parseAnd());
    }
    return Object.freeze({ kind: 'or', children: Object.freeze(children) });
  }

  // and := not ('&' not)*
  private parseAnd(): FilterNode {
    const first = this.parseNot();
    if (!isPunct(this.lexer.peek(), '&')) return first;
    const children: FilterNode[] = [first];
    while (isPunct(this.lexer.peek(), '&')) {
      this.lexer.next();
      children.push(this.parseNot());
    }
    return Object.freeze({ kind: 'and', children: Object.freeze(children) });
  }

  // not := '~' not | '(' expr ')' | call
  private parseNot(): FilterNode {
    const token = this.lexer.peek();
    if (isPunct(token, '~')) {
      this.lexer.next();
      this.enter(token);
      const child = this.parseNot();
      this.depth--;
      return Object.freeze({ kind: 'not', child });
    }
    if (isPunct(token, '(')) {
      this.lexer.next();
      this.enter(token);
      const inner = this.parseOr();
      const close = this.lexer.next();
      if (!isPunct(close, ')')) {
        if (close.type === 'eof') {
          throw new QuerySyntaxError("Unbalanced parentheses: '(' is never closed", token.start);
        }
        throw new QuerySyntaxError(
          `Expected ')' to close the '(' at position ${token.start}, found ${this.lexer.show(close)}`, close.start,
        );
      }
      this.depth--;
      return inner;
    }
    if (token.type === 'name' && token.name === 'Q') return this.parseCall();
    throw this.unexpected(token, "expected Q(...), '~' or '('");
  }

  // call := 'Q' '(' [arg (',' arg)*] ')'
  private parseCall(): FilterNode {
    const q = this.lexer.next();
    const open = this.lexer.next();
    if (!isPunct(open, '(')) {
      if (open.type === 'eof') throw this.unexpected(open, "expected '(' after 'Q'");
      throw new QuerySyntaxError(`Expected '(' after 'Q', found ${this.lexer.show(open)}`, open.start);
    }
    if (isPunct(this.lexer.peek(), ')')) {
      this.lexer.next();
      return Object.freeze({ kind: 'all' });
    }
    const args: ConditionNode[] = [];
    for (;;) {
      args.push(this.parseArg());
      const after = this.lexer.next();
      if (isPunct(after, ',')) continue;
      if (isPunct(after, ')')) break;
      if (after.type === 'eof') {
        throw new QuerySyntaxError("Unbalanced parentheses: '(' is never closed", open.start);
      }
      throw new QuerySyntaxError(
        `Expected ',' or ')' after argument of Q at position ${q.start}, found ${this.lexer.show(after)}`, after.start,
      );
    }
    if (args.length === 1) return args[0] as ConditionNode;
    return Object.freeze({ kind: 'and', children: Object.freeze(args) });
  }

  // arg := path '=' value
  private parseArg(): ConditionNode {
    const path = this.lexer.next();
    if (path.type !== 'name') {
      if (path.type === 'eof') throw this.unexpected(path, 'expected a field name');
      throw new QuerySyntaxError(`Expected a field name but found ${this.lexer.show(path)}`, path.start);
    }
    const segments = path.name.split('__');
    if (segments.includes('')) {
      throw new QuerySyntaxError(
        `Empty segment in field path ${quote(path.name)} ('__' must separate non-empty names)`, path.start,
      );
    }
    const equals = this.lexer.next();
    if (!isPunct(equals, '=')) {
      if (equals.type === 'eof') throw this.unexpected(equals, `expected '=' after field path ${quote(path.name)}`);
      throw new QuerySyntaxError(
        `Expected '=' after field path ${quote(path.name)}, found ${this.lexer.show(equals)}`, equals.start,
      );
    }
    if (++this.conditions > MAX_CONDITIONS) {
      throw new QuerySyntaxError(
        `Filter expression has too many conditions (more than ${MAX_CONDITIONS})`, path.start,
      );
    }
    const value = this.parseValue();
    return Object.freeze({ kind: 'condition', segments: Object.freeze(segments), value, position: path.start });
  }

  // value := string | number | keyword | variable | list
  private parseValue(): FilterValue {
    const token = this.lexer.next();
    switch (token.type) {
      case 'string':
      case 'number':
        return token.value;
      case 'name': {
        const keyword = KEYWORD_VALUES.get(token.name);
        if (keyword !== undefined) return keyword;
        if (VARIABLE_NAMES.has(token.name)) {
          return Object.freeze({ variable: token.name as FilterVariable });
        }
        throw new QuerySyntaxError(
          `Unknown value ${this.lexer.show(token)} (strings must be quoted; known words are True, False, None, ` +
            'true, false, null, user_id, company_id, company_ids, today, now)',
          token.start,
        );
      }
      case 'punct':
        if (token.char === '[') return this.parseSequence(token, ']');
        if (token.char === '(') return this.parseSequence(token, ')');
        throw new QuerySyntaxError(`Expected a value but found ${this.lexer.show(token)}`, token.start);
      case 'eof':
        throw this.unexpected(token, 'expected a value');
    }
  }

  /**
   * The items of a list (`[` … `]`) or tuple (`(` … `)`) after its opening token. Both allow a
   * trailing comma; a tuple needs at least one comma, so `(1)` and `()` are errors.
   */
  private parseSequence(open: Token, closer: ']' | ')'): readonly FilterValue[] {
    this.enter(open);
    const tuple = closer === ')';
    const what = tuple ? 'tuple' : 'list';
    const unbalanced = (): QuerySyntaxError =>
      new QuerySyntaxError(
        tuple ? "Unbalanced parentheses: '(' is never closed" : "Unbalanced brackets: '[' is never closed", open.start,
      );
    const items: FilterValue[] = [];
    for (;;) {
      const head = this.lexer.peek();
      if (isPunct(head, closer)) {
        if (tuple && items.length === 0) {
          throw new QuerySyntaxError("Unexpected ')': an empty tuple '()' is not allowed, use '[]' for an empty list", head.start);
        }
        this.lexer.next();
        break;
      }
      if (head.type === 'eof') throw unbalanced();
      if (items.length >= MAX_LIST_ITEMS) {
        throw new QuerySyntaxError(`The ${what} has too many items (more than ${MAX_LIST_ITEMS})`, head.start);
      }
      items.push(this.parseValue());
      const after = this.lexer.next();
      if (isPunct(after, ',')) continue;
      if (isPunct(after, closer)) {
        if (tuple && items.length === 1) {
          throw new QuerySyntaxError(
            "Unexpected ')': a parenthesised value needs a comma to be a tuple, e.g. (1,)", after.start,
          );
        }
        break;
      }
      if (after.type === 'eof') throw unbalanced();
      throw new QuerySyntaxError(
        `Expected ',' or '${closer}' in ${what}, found ${this.lexer.show(after)}`, after.start,
      );
    }
    this.depth--;
    return Object.freeze(items);
  }

  /** Enter one nesting level at `token`, refusing to go deeper than MAX_FILTER_DEPTH. */
  private enter(token: Token): void {
    if (++this.depth > MAX_FILTER_DEPTH) {
      throw new QuerySyntaxError(
        `Filter expression is nested too deeply (more than ${MAX_FILTER_DEPTH} levels)`, token.start,
      );
    }
  }

  private unexpected(token: Token, expected: string): QuerySyntaxError {
    if (token.type === 'eof') return new QuerySyntaxError(`Unexpected end of expression: ${expected}`, token.start);
    return new QuerySyntaxError(`Unexpected ${this.lexer.show(token)}: ${expected}`, token.start);
  }
}

/**
 * Parse Q-expression text into a `FilterNode`. Throws `QuerySyntaxError` (with the 0-based
 * position of the offending token) for anything that is not a well-formed filter.
 */
export function parseFilter(text: string): FilterNode {
  if (typeof text !== 'string') {
    throw new QuerySyntaxError(`Filter expression must be a string, not ${text === null ? 'null' : typeof text}`);
  }
  if (text.length > MAX_FILTER_LENGTH) {
    throw new QuerySyntaxError(
      `Filter expression is too long (${text.length} characters, at most ${MAX_FILTER_LENGTH})`, MAX_FILTER_LENGTH,
    );
  }
  return new Parser(text).parse();
}
