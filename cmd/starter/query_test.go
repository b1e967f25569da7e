package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/store"
)

// TestQuerySeveralSweeps: NAME,NAME queries the tables of both sweeps side
// by side, and a name without tables is an error naming it.
func TestQuerySeveralSweeps(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	g := &globals{blob: "file://" + dir + "?create_dir=1&metadata=skip", out: &bytes.Buffer{}}
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, name := range []string{"one", "two"} {
		sk, _ := store.SweepKeys(name)
		pk, _ := sk.Point("p0000000001")
		rounds := make([]store.RoundRow, i+1)
		for r := range rounds {
			rounds[r] = store.RoundRow{Sweep: name, Point: "p0000000001", Round: int32(r)}
		}
		for _, err := range []error{
			store.WriteRows(ctx, st, pk.Compacted(store.TableRounds), rounds),
			store.WriteRows(ctx, st, pk.Compacted(store.TableClients), []store.ClientRow{{Sweep: name}}),
			store.WriteRows(ctx, st, pk.Compacted(store.TablePartitions), []store.PartitionRow{{Sweep: name}}),
			store.WriteRows(ctx, st, pk.Compacted(store.TablePoints), []store.PointRow{{Sweep: name}}),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := querySweepTables(ctx, g, "one,two", "SELECT sweep, count(*) AS n FROM rounds GROUP BY sweep ORDER BY sweep", true); err != nil {
		t.Fatal(err)
	}
	got := g.out.(*bytes.Buffer).String()
	if want := "{\"n\":1,\"sweep\":\"one\"}\n{\"n\":2,\"sweep\":\"two\"}\n"; got != want {
		t.Errorf("query over one,two printed %q; want %q", got, want)
	}
	// attacks: sweep two attacked, sweep one did not; the view spans both.
	sk, _ := store.SweepKeys("two")
	pk, _ := sk.Point("p0000000001")
	iacc := 0.75
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TableAttacks), []store.AttackRow{
		{Sweep: "two", Method: "rlu", IAcc: &iacc, TrueCounts: []int32{3, 1}, Counts: []int32{2, 2}},
	}); err != nil {
		t.Fatal(err)
	}
	g.out = &bytes.Buffer{}
	if err := querySweepTables(ctx, g, "one,two", "SELECT sweep, method, iacc, counts[1] AS c1 FROM attacks", true); err != nil {
		t.Fatal(err)
	}
	if got, want := g.out.(*bytes.Buffer).String(), "{\"c1\":2,\"iacc\":0.75,\"method\":\"rlu\",\"sweep\":\"two\"}\n"; got != want {
		t.Errorf("attacks over one,two printed %q; want %q", got, want)
	}
	g.out = &bytes.Buffer{}
	if err := querySweepTables(ctx, g, "one", "SELECT count(*) AS n FROM attacks", true); err != nil {
		t.Fatal(err)
	}
	if got := g.out.(*bytes.Buffer).String(); got != "{\"n\":0}\n" {
		t.Errorf("attacks of a sweep without attacks: %q; want an empty view", got)
	}
	err = querySweepTables(ctx, g, "one,three", "SELECT 1", true)
	if err == nil || !strings.Contains(err.Error(), "sweep three has no rounds table") {
		t.Errorf("query over a sweep that never ran: %v", err)
	}
}
