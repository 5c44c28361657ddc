import { describe, expect, it } from 'vitest';
import { parseFilter } from '../../../src/catalog/filter/parse-filter.ts';
import { compileFilter, type SqlDialect } from '../../../src/store/sql/compile-filter.ts';

// A PostgreSQL-shaped dialect: numbered placeholders, ILIKE-free lower() equality, a tags array.
const dialect: SqlDialect = {
  placeholder: (index) => `$${index}`,
  column: (field) => `p.${field}`,
  caseInsensitiveEquals: (column, placeholder) => `lower(${column}) = lower(${placeholder})`,
  tagMatch: (placeholder, negated) => `${negated ? 'NOT ' : ''}(lower(${placeholder}) = ANY (p.tags_lower))`,
  bindValue: (value) => value,
};

describe('compileFilter', () => {
  it('binds every literal as a parameter and never copies filter text into SQL', () => {
    const params: unknown[] = [];
    const sql = compileFilter(
      parseFilter(`shop_name = "x'; DROP TABLE products; --" OR (price_min >= 10 AND NOT available = true) OR tags IN [A, "B"]`),
      dialect,
      params,
    );
    expect(sql).toBe(
      '(lower(p.shop_name) = lower($1) OR (p.price_min >= $2 AND (NOT p.available = $3)) OR ((lower($4) = ANY (p.tags_lower)) OR (lower($5) = ANY (p.tags_lower))))',
    );
    expect(params).toStrictEqual(["x'; DROP TABLE products; --", 10, true, 'A', 'B']);
    expect(sql).not.toContain('DROP');
  });

  it('continues numbering after parameters already bound', () => {
    const params: unknown[] = ['earlier'];
    expect(compileFilter(parseFilter('cursor > 17000000000001024'), dialect, params)).toBe('p.cursor > $2');
    expect(params).toStrictEqual(['earlier', 17000000000001024]);
  });

  it('negates string equality, NOT IN and tag inequality', () => {
    const params: unknown[] = [];
    expect(compileFilter(parseFilter('brand != Nike AND brand NOT IN [a, b] AND tags != X AND price_max != 5'), dialect, params)).toBe(
      '(NOT (lower(p.brand) = lower($1)) AND (NOT (lower(p.brand) = lower($2)) AND NOT (lower(p.brand) = lower($3))) AND NOT (lower($4) = ANY (p.tags_lower)) AND p.price_max <> $5)',
    );
  });

  it('compares timestamps as epoch milliseconds', () => {
    const params: unknown[] = [];
    expect(compileFilter(parseFilter('updated_at < 2026-01-01T00:00:00Z'), dialect, params)).toBe('p.updated_at < $1');
    expect(params).toStrictEqual([Date.UTC(2026, 0, 1)]);
  });
});
