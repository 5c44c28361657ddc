// Compiles a type-checked FilterExpr to a parameterised SQL boolean expression. Dialect-neutral:
// each engine supplies placeholders, column expressions, case-insensitive equality and tag
// membership. Guarantee: every literal goes into `params`; no filter text ever reaches the SQL.
import { FILTER_FIELDS, type FieldType, type FilterExpr, type FilterField, type FilterLiteral } from '../../catalog/filter/ast.ts';

export interface SqlDialect {
  /** The placeholder for the parameter at this 1-based index (`?` for SQLite, `$1` for PostgreSQL). */
  placeholder(index1Based: number): string;
  /**
   * The SQL expression of a field. Timestamp fields must yield epoch milliseconds, `cursor` an
   * integer, `available` whatever `bindValue` produces for booleans.
   */
  column(field: Exclude<FilterField, 'tags'>): string;
  /** Case-insensitive equality of a string column with a bound string. */
  caseInsensitiveEquals(columnSql: string, placeholderSql: string): string;
  /** True when any tag of the product equals the bound string case-insensitively (false when negated). */
  tagMatch(placeholderSql: string, negated: boolean): string;
  /** Converts a literal to the driver's parameter value (e.g. booleans to 0/1 on SQLite). */
  bindValue(value: FilterLiteral, type: FieldType): unknown;
}

export function compileFilter(expr: FilterExpr, dialect: SqlDialect, params: unknown[]): string {
  const bind = (value: FilterLiteral, type: FieldType): string => {
    params.push(dialect.bindValue(value, type));
    return dialect.placeholder(params.length);
  };

  const compare = (field: FilterField, operator: string, value: FilterLiteral): string => {
    const type = FILTER_FIELDS[field];
    if (field === 'tags') return dialect.tagMatch(bind(value, type), operator === '!=');
    const column = dialect.column(field);
    if (type === 'string') {
      const equals = dialect.caseInsensitiveEquals(column, bind(value, type));
      return operator === '!=' ? `NOT (${equals})` : equals;
    }
    // The parser admits only =, !=, <, <=, >, >= here; map `!=` to the SQL standard `<>`.
    const sqlOperator = operator === '!=' ? '<>' : operator;
    return `${column} ${sqlOperator} ${bind(value, type)}`;
  };

  const walk = (node: FilterExpr): string => {
    switch (node.type) {
      case 'and':
        return `(${node.operands.map(walk).join(' AND ')})`;
      case 'or':
        return `(${node.operands.map(walk).join(' OR ')})`;
      case 'not':
        return `(NOT ${walk(node.operand)})`;
      case 'compare':
        return compare(node.field, node.operator, node.value);
      case 'in': {
        const each = node.values.map((value) => compare(node.field, node.negated ? '!=' : '=', value));
        return `(${each.join(node.negated ? ' AND ' : ' OR ')})`;
      }
    }
  };

  return walk(expr);
}
