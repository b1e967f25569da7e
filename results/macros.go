package results

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The macros every DB defines, for queries that put a 95% interval on a
// mean over seeds (the paired view, and the claims of package claims):
//
//	t975(df)       t_{0.975, df}, the 97.5% quantile of Student's t with df
//	               degrees of freedom (T975; NULL for df < 1; df above tMax
//	               uses tMax's value)
//	ci95_half(x)   an aggregate: the half-width of the 95% Student-t interval
//	               of the mean of x over its non-null values,
//	               t975(n − 1)·sd/√n with sd the sample standard deviation
//	               (NULL for fewer than two values)
//
// so avg(x) ± ci95_half(x) is the interval the paired view reports. The
// quantiles are one list in the one-row table t975_values, read by an
// uncorrelated subquery: a list literal in the macro made the paired view
// several times slower to run, and a correlated lookup cannot take an
// aggregate's value (ci95_half).
const macros = `CREATE TABLE t975_values AS SELECT %s AS q;
CREATE MACRO t975(df) AS CASE WHEN df >= 1 THEN (SELECT q FROM t975_values)[LEAST(df, %d)] END;
CREATE MACRO ci95_half(x) AS t975(count(x) - 1) * stddev_samp(x) / sqrt(count(x));`

// tMax is the largest degrees of freedom t975 holds; more use its value
// (1.966 at 500, within 0.3% of the normal 1.960).
const tMax = 500

// createMacros creates the macros on db.
func createMacros(ctx context.Context, db *sql.DB) error {
	qs := make([]string, tMax)
	for df := 1; df <= tMax; df++ {
		qs[df-1] = fmt.Sprintf("%.16e", T975(df)) // an exponent makes a DOUBLE literal, not a DECIMAL
	}
	q := fmt.Sprintf(macros, "["+strings.Join(qs, ", ")+"]", tMax)
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create macros: %w", err)
	}
	return nil
}
