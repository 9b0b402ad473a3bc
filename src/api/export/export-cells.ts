/**
 * One cell of an export from a serialized record (what `QuerySet.read` answers), typed as a
 * spreadsheet user expects (CONTRACTS C3): numbers as numbers, Date and Datetime as real Excel
 * dates, Boolean as TRUE/FALSE, Monetary with its currency's decimals, Selection as its label,
 * a relation as its display name, a to-many as a comma-separated list. Import-compatible cells
 * carry what an import resolves instead: a Selection's value, and a related record's
 * `identifier` when it has one (else its display name).
 */
import type { Field } from '../../orm/fields/field.js';
import { RelationalField } from '../../orm/fields/relational-fields.js';
import type { Serialized } from '../../orm/read/read-records.js';
import type { ExportColumn } from './export-columns.js';
import type { XlsxCell, XlsxStreamWriter } from './xlsx-stream-writer.js';

/** Decimals when an amount has no readable currency (most currencies have two). */
const DEFAULT_DECIMALS = 2;

export class ExportCells {
  private readonly dateStyle: number;
  private readonly datetimeStyle: number;
  private readonly amountStyles = new Map<number, number>();

  constructor(
    private readonly xlsx: XlsxStreamWriter,
    private readonly importCompatible: boolean,
    private readonly choices: ReadonlyMap<Field, ReadonlyMap<string, string>>,
  ) {
    this.dateStyle = xlsx.numberFormat('yyyy-mm-dd');
    this.datetimeStyle = xlsx.numberFormat('yyyy-mm-dd hh:mm:ss');
  }

  /**
   * The cell of `column` read from `holder`, the record at step `from` of the column's path (the
   * exported record itself, or one of its lines at step 1). A holder that is the leaf itself (a
   * bare `order_lines` column, one line per row) is shown by its name.
   */
  cell(column: ExportColumn, holder: Serialized | null, from: number): XlsxCell {
    if (!column.readable) return null;
    let owner = holder;
    const { steps } = column;
    if (from === steps.length) return owner ? this.recordName(owner) : null;
    for (let i = from; i < steps.length - 1 && owner; i++) owner = owner[steps[i]!.name] as Serialized | null;
    if (!owner) return null;
    const leaf = steps[steps.length - 1]!;
    const value = owner[leaf.name];
    if (value === null || value === undefined) return null;
    if (leaf instanceof RelationalField) {
      if (Array.isArray(value)) return (value as Serialized[]).map((r) => this.recordName(r)).filter((n) => n !== null).join(this.importCompatible ? ',' : ', ') || null;
      return this.recordName(value as Serialized);
    }
    switch (leaf.type) {
      case 'Integer':
      case 'Float':
        return value as number;
      case 'Boolean':
        return value as boolean;
      case 'Monetary':
        return { value: value as number, style: this.amountStyle(column, owner) };
      case 'Date':
        return this.xlsx.date(value as string, this.dateStyle);
      case 'Datetime':
        return this.xlsx.datetime(value as string, this.datetimeStyle);
      case 'Selection':
        return this.importCompatible ? value as string : this.choices.get(leaf)?.get(value as string) ?? value as string;
      case 'Json':
        return JSON.stringify(value);
      default:
        return String(value);
    }
  }

  /** A related record as a person reads it (display name), or as an import finds it again (identifier first). */
  private recordName(record: Serialized): string | null {
    const identifier = record.identifier;
    if (this.importCompatible && typeof identifier === 'string' && identifier !== '') return identifier;
    // A link read through the target's record rules is null when hidden; a bare one keeps a null name when its model is unreadable.
    return (record.display_name as string | null | undefined) ?? null;
  }

  private amountStyle(column: ExportColumn, owner: Serialized): number {
    const currency = column.currencyField ? owner[column.currencyField] as Serialized | null : null;
    const rounding = currency?.rounding;
    const decimals = typeof rounding === 'number' && rounding > 0 && rounding < 1
      ? Math.min(10, Math.max(0, Math.round(-Math.log10(rounding))))
      : typeof rounding === 'number' && rounding >= 1 ? 0 : DEFAULT_DECIMALS;
    let style = this.amountStyles.get(decimals);
    if (style === undefined) {
      style = this.xlsx.numberFormat(decimals ? `#,##0.${'0'.repeat(decimals)}` : '#,##0');
      this.amountStyles.set(decimals, style);
    }
    return style;
  }
}
