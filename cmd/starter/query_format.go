package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// queryFormat is how a query's rows are printed.
//
//   - table: aligned columns under an upper-case header; floats rounded to
//     6 significant digits (integral ones in full), NULL as NULL.
//   - csv: RFC 4180 (encoding/csv) with a header of the column names; floats
//     exact (the shortest text that reads back to the same value, as JSON
//     prints them), NULL as an empty field.
//   - json: JSON lines, one object per row with the columns in query order
//     (a repeated column name gets a suffix: seed, seed_2); NULL, NaN and
//     ±Inf as null. Lines stream as rows arrive and suit jq and
//     pandas.read_json(lines=True).
//
// Lists (DuckDB LIST) print as [a, b, c] in table and csv, which for numbers
// and strings is a JSON array, and as arrays in json; structs as objects.
type queryFormat string

const (
	formatTable queryFormat = "table"
	formatCSV   queryFormat = "csv"
	formatJSON  queryFormat = "json"
)

const formatHelp = "output: table (aligned), csv (with a header; NULL empty) or json (one object per line; NULL null)"

// parseFormat checks a --format value; flag names the flag for the message.
func parseFormat(s, flag string) (queryFormat, error) {
	switch f := queryFormat(s); f {
	case formatTable, formatCSV, formatJSON:
		return f, nil
	}
	return "", fmt.Errorf("%s %q: want table, csv or json: %w", flag, s, errUsage)
}

// rowPrinter prints rows of one result in one format.
type rowPrinter struct {
	format queryFormat
	cols   []string
	keys   [][]byte // json: the encoded, de-duplicated column names
	tw     *tabwriter.Writer
	cw     *csv.Writer
	w      io.Writer
	line   bytes.Buffer
	cells  []string
}

func newRowPrinter(w io.Writer, cols []string, f queryFormat) *rowPrinter {
	p := &rowPrinter{format: f, cols: cols, w: w, cells: make([]string, len(cols))}
	switch f {
	case formatTable:
		p.tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for i, c := range cols {
			p.cells[i] = tableCell(strings.ToUpper(c))
		}
		fmt.Fprintln(p.tw, strings.Join(p.cells, "\t"))
	case formatCSV:
		p.cw = csv.NewWriter(w)
		_ = p.cw.Write(cols) // an error sticks in cw and flush reports it
	case formatJSON:
		seen := map[string]int{}
		for _, c := range cols {
			seen[c]++
			if seen[c] > 1 {
				c = fmt.Sprintf("%s_%d", c, seen[c])
			}
			k, _ := json.Marshal(c) // a string always marshals
			p.keys = append(p.keys, k)
		}
	}
	return p
}

func (p *rowPrinter) row(vals []any) error {
	switch p.format {
	case formatTable:
		for i, v := range vals {
			if v == nil {
				p.cells[i] = "NULL"
			} else {
				p.cells[i] = tableCell(valueText(v, true))
			}
		}
		_, err := fmt.Fprintln(p.tw, strings.Join(p.cells, "\t"))
		return err
	case formatCSV:
		for i, v := range vals {
			if v == nil {
				p.cells[i] = ""
			} else {
				p.cells[i] = valueText(v, false)
			}
		}
		return p.cw.Write(p.cells)
	default:
		p.line.Reset()
		p.line.WriteByte('{')
		for i, v := range vals {
			if i > 0 {
				p.line.WriteByte(',')
			}
			p.line.Write(p.keys[i])
			p.line.WriteByte(':')
			b, err := json.Marshal(jsonValue(v))
			if err != nil {
				return fmt.Errorf("column %s: %w", p.cols[i], err)
			}
			p.line.Write(b)
		}
		p.line.WriteString("}\n")
		_, err := p.w.Write(p.line.Bytes())
		return err
	}
}

func (p *rowPrinter) flush() error {
	switch p.format {
	case formatTable:
		return p.tw.Flush()
	case formatCSV:
		p.cw.Flush()
		return p.cw.Error()
	}
	return nil
}

// tableCell keeps a cell on its line and in its column.
func tableCell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", `\n`, "\r", `\r`).Replace(s)
}

// valueText is a non-NULL value as text: rounded for a table (short) or
// exact. Strings are themselves; inside lists and structs they are quoted,
// and NULL is null.
func valueText(v any, short bool) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return fmt.Sprintf("\\x%x", v)
	}
	var b strings.Builder
	writeValue(&b, v, short)
	return b.String()
}

func writeValue(b *strings.Builder, v any, short bool) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		q, _ := json.Marshal(v)
		b.Write(q)
	case float64:
		b.WriteString(floatText(v, 64, short))
	case float32:
		b.WriteString(floatText(float64(v), 32, short))
	case time.Time:
		b.WriteString(v.Format(time.RFC3339Nano))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e, short)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, k, short)
			b.WriteString(": ")
			writeValue(b, v[k], short)
		}
		b.WriteByte('}')
	case duckdb.Map:
		writeValue(b, stringKeys(v), short)
	case duckdb.UUID:
		b.WriteString(v.String())
	default:
		fmt.Fprint(b, v)
	}
}

// floatText prints a float rounded to 6 significant digits (short; integral
// values below 10^15 in full), or exactly in encoding/json's notation.
// NaN and ±Inf print as NaN, +Inf, -Inf.
func floatText(v float64, bits int, short bool) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, bits)
	case short && math.Abs(v) >= 1e6:
		return strconv.FormatFloat(v, 'f', 0, bits)
	case short:
		return strconv.FormatFloat(v, 'g', 6, bits)
	}
	if a := math.Abs(v); a < 1e-6 || a >= 1e21 {
		return strconv.FormatFloat(v, 'e', -1, bits)
	}
	return strconv.FormatFloat(v, 'f', -1, bits)
}

// jsonValue makes a scanned value encodable: NaN and ±Inf become null,
// DECIMAL and HUGEINT numbers, MAP an object with string keys.
func jsonValue(v any) any {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil
		}
	case duckdb.Decimal:
		return json.Number(v.String())
	case *big.Int:
		return json.Number(v.String())
	case duckdb.UUID:
		return v.String()
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonValue(e)
		}
		return out
	case duckdb.Map:
		return jsonValue(stringKeys(v))
	}
	return v
}

func stringKeys(m duckdb.Map) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[fmt.Sprint(k)] = e
	}
	return out
}
