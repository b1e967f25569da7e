package store

import (
	"cmp"
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
)

func memStore(t *testing.T) *Store {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	return New(b)
}

func TestFileRoundTrip(t *testing.T) {
	w := []float32{0, -1.5, float32(math.Pi), math.MaxFloat32, math.SmallestNonzeroFloat32}
	f, err := NewFile("update", "mlp:1x28x28:200:10", 7, 3).AddF32("delta", w).AddJSON("summary", map[string]int{"n": 600})
	if err != nil {
		t.Fatal(err)
	}
	b, sum, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(sum) != 64 {
		t.Errorf("checksum %q; want 64 hex digits", sum)
	}
	g, err := DecodeFile("x", b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Vector("delta", len(w))
	if err != nil {
		t.Fatal(err)
	}
	for i := range w {
		if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
			t.Errorf("delta[%d] = %v; want %v bit for bit", i, got[i], w[i])
		}
	}
	var s map[string]int
	if err := g.Decode("summary", &s); err != nil || s["n"] != 600 {
		t.Errorf("summary = %v, %v; want n=600", s, err)
	}
	if g.Kind != "update" || g.Arch != "mlp:1x28x28:200:10" || g.Round != 7 || g.Client != 3 {
		t.Errorf("header = %+v", g.Header)
	}
	if _, err := g.Vector("delta", len(w)+1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Vector with wrong length: error = %v; want ErrCorrupt", err)
	}
}

// TestFileCorruption: every single-byte change and every truncation of a
// file is detected.
func TestFileCorruption(t *testing.T) {
	b, _, err := NewFile("global", "logreg", 1, -1).AddF32("weights", []float32{1, 2, 3}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		if _, err := DecodeFile("x", c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipping byte %d: error = %v; want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, err := DecodeFile("x", b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: error = %v; want ErrCorrupt", n, err)
		}
	}
}

func TestChecksum(t *testing.T) {
	// Known value: sha256 of the little-endian bytes of float32 1.0 (00 00 80 3f),
	// computed with: printf '\x00\x00\x80\x3f' | sha256sum
	if got, want := Checksum([]float32{1}), "e00e5eb9444182f352323374ef4e08ebcb784725fdd4fd612d7730540b3e0c8c"; got != want {
		t.Errorf("Checksum([1]) = %s; want %s", got, want)
	}
	a, b := Checksum([]float32{1, 2}), Checksum([]float32{2, 1})
	if a == b {
		t.Error("Checksum ignores order")
	}
	if Checksum(make([]float32, 5000)) == Checksum(make([]float32, 5001)) {
		t.Error("Checksum ignores length")
	}
}

func TestKeys(t *testing.T) {
	sk, err := SweepKeys("demo")
	if err != nil {
		t.Fatal(err)
	}
	pk, err := sk.Point("p0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ got, want string }{
		{sk.Spec(), "sweeps/demo/spec.json"},
		{pk.Config(), "sweeps/demo/p0123456789abcdef0123456789abcdef/config.json"},
		{pk.Global(42), "sweeps/demo/p0123456789abcdef0123456789abcdef/rounds/000042/global.bin"},
		{pk.Update(42, 17), "sweeps/demo/p0123456789abcdef0123456789abcdef/rounds/000042/updates/000017.bin"},
		{pk.Committed(3), "sweeps/demo/p0123456789abcdef0123456789abcdef/rounds/000003/COMMITTED.json"},
		{pk.Part(TableRounds, 3), "sweeps/demo/p0123456789abcdef0123456789abcdef/metrics/rounds/r000003.parquet"},
		{pk.Compacted(TableClients), "sweeps/demo/p0123456789abcdef0123456789abcdef/metrics/clients/all.parquet"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("key = %q; want %q", tt.got, tt.want)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/b", "Demo", "x y", strings.Repeat("a", 64)} {
		if _, err := SweepKeys(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SweepKeys(%q) error = %v; want ErrInvalid", bad, err)
		}
	}
	// An older build's 10-digit ID still names its stored point.
	if old, err := sk.Point("p0123456789"); err != nil || old.Config() != "sweeps/demo/p0123456789/config.json" {
		t.Errorf("Point of a 10-digit ID = %q, %v; want its keys", old.Config(), err)
	}
	for _, bad := range []string{"p012345678", "../p0123456", "p0123456789/..", "P0123456789", "p0123456789abcdef0123456789abcde",
		"p0123456789abcdef0123456789abcdef0", "p0123456789abcdef0123456789abcdeF", "p0123456789abcdef0123456789abcdef\x00", "%2e%2e"} {
		if _, err := sk.Point(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Point(%q) error = %v; want ErrInvalid", bad, err)
		}
	}
	for section, want := range map[string]string{
		"algorithm/g/17":     "sweeps/demo/p0123456789abcdef0123456789abcdef/server/algorithm/g/17/000042.bin",
		"server_optimizer/m": "sweeps/demo/p0123456789abcdef0123456789abcdef/server/server_optimizer/m/000042.bin",
	} {
		if got, err := pk.ServerVector(section, 42); err != nil || got != want {
			t.Errorf("ServerVector(%q, 42) = %q, %v; want %q", section, got, err, want)
		}
	}
	for _, bad := range []string{"", "algorithm", "algorithm/", "algorithm/../x", "algorithm/./x", "algorithm/g//1", "/g", "Algorithm/h",
		"algorithm/a b", "algorithm/h\x00", "algorithm/" + strings.Repeat("a", 65), "algorithm/a/b/c/d/e"} {
		if _, err := pk.ServerVector(bad, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("ServerVector(%q) error = %v; want ErrInvalid", bad, err)
		}
	}
}

func TestLastCommitted(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	sk, _ := SweepKeys("s")
	pk, _ := sk.Point("p00000000000000000000000000000000")
	if r, c, err := s.LastCommitted(ctx, pk); r != -1 || c != nil || err != nil {
		t.Fatalf("empty point: LastCommitted = %d, %v, %v; want -1, nil, nil", r, c, err)
	}
	for _, r := range []int{0, 1, 2} {
		if err := s.PutJSON(ctx, pk.Committed(r), Commit{Round: r}); err != nil {
			t.Fatal(err)
		}
	}
	// Round 3 started but never committed: ignored.
	if err := s.Put(ctx, pk.Global(3), []byte("partial")); err != nil {
		t.Fatal(err)
	}
	if r, c, err := s.LastCommitted(ctx, pk); r != 2 || c == nil || c.Round != 2 || err != nil {
		t.Errorf("LastCommitted = %d, %+v, %v; want 2", r, c, err)
	}
	got, err := s.CommittedRounds(ctx, pk)
	if err != nil || !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("CommittedRounds = %v, %v; want [0 1 2]", got, err)
	}
	// A manifest that names another round is corrupt.
	if err := s.PutJSON(ctx, pk.Committed(5), Commit{Round: 4}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LastCommitted(ctx, pk); !errors.Is(err, ErrCorrupt) {
		t.Errorf("mismatched manifest: error = %v; want ErrCorrupt", err)
	}
}

func TestTablesRewriteAndCompact(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	sk, _ := SweepKeys("s")
	pk, _ := sk.Point("p00000000000000000000000000000000")
	acc := func(v float64) *float64 { return &v }
	roundOf := func(r RoundRow) int32 { return r.Round }
	less := func(a, b RoundRow) int { return cmp.Compare(a.Round, b.Round) }
	for r := int32(0); r < 4; r++ {
		row := RoundRow{Sweep: "s", Point: "p00000000000000000000000000000000", Round: r, Clients: 10, TestAcc: acc(float64(r) / 10), Evaluated: true}
		if err := WriteRows(ctx, s, pk.Part(TableRounds, int(r)), []RoundRow{row}); err != nil {
			t.Fatal(err)
		}
	}
	// Rewriting round 2 replaces its row; it never duplicates it.
	if err := WriteRows(ctx, s, pk.Part(TableRounds, 2), []RoundRow{{Sweep: "s", Point: "p00000000000000000000000000000000", Round: 2, Clients: 7}}); err != nil {
		t.Fatal(err)
	}
	check := func(stage string) {
		t.Helper()
		rows, err := ReadTable(ctx, s, pk, TableRounds, roundOf, less)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 {
			t.Fatalf("%s: %d rows; want 4", stage, len(rows))
		}
		if rows[2].Clients != 7 || rows[2].TestAcc != nil || *rows[3].TestAcc != 0.3 {
			t.Errorf("%s: rows = %+v", stage, rows)
		}
	}
	check("parts")
	if err := Compact(ctx, s, pk, TableRounds, roundOf, less); err != nil {
		t.Fatal(err)
	}
	keys, _ := s.List(ctx, pk.Table(TableRounds))
	if !reflect.DeepEqual(keys, []string{pk.Compacted(TableRounds)}) {
		t.Errorf("after compaction: files %v; want only %s", keys, pk.Compacted(TableRounds))
	}
	check("compacted")
	// A crash after writing the compacted file but before deleting a part:
	// the part's round replaces the compacted rows of that round, no duplicates.
	if err := WriteRows(ctx, s, pk.Part(TableRounds, 3), []RoundRow{{Sweep: "s", Point: "p00000000000000000000000000000000", Round: 3, Clients: 10, TestAcc: acc(0.3), Evaluated: true}}); err != nil {
		t.Fatal(err)
	}
	check("crash window")
	if err := Compact(ctx, s, pk, TableRounds, roundOf, less); err != nil {
		t.Fatal(err)
	}
	check("compacted again")
}

func TestGetMissing(t *testing.T) {
	s := memStore(t)
	if _, err := s.Get(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(missing) error = %v; want ErrNotFound", err)
	}
	if _, err := s.GetFile(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetFile(missing) error = %v; want ErrNotFound", err)
	}
}

// TestVectorsWith: AddVectors writes named sections in sorted order under a
// prefix, and VectorsWith gives them back, prefix removed, after a round
// trip through the file format; other prefixes stay apart.
func TestVectorsWith(t *testing.T) {
	f := NewFile("state", "a", 1, -1).
		AddVectors("sampler/", map[string][]float32{"seen": {1, 2}}).
		AddVectors("algorithm/", map[string][]float32{"h": {3}, "c": {4, 5}})
	var names []string
	for _, s := range f.Sections {
		names = append(names, s.Name)
	}
	if want := []string{"sampler/seen", "algorithm/c", "algorithm/h"}; !reflect.DeepEqual(names, want) {
		t.Errorf("sections %v; want %v", names, want)
	}
	b, _, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	g, err := DecodeFile("f", b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.VectorsWith("algorithm/"), map[string][]float32{"c": {4, 5}, "h": {3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("VectorsWith(algorithm/) = %v; want %v", got, want)
	}
	if got := g.VectorsWith("client/"); got != nil {
		t.Errorf("VectorsWith(client/) = %v; want nil", got)
	}
}

// TestPutLocal: a file:// store writes without gocloud's MD5 (Store.write);
// what it writes reads back whole and overwrites whole, and a write whose
// context is cancelled leaves nothing at its key.
func TestPutLocal(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "file://"+t.TempDir()+"?metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.local {
		t.Fatal("a file:// store is not local")
	}
	for _, data := range []string{strings.Repeat("x", 1<<20), "short"} {
		if err := s.Put(ctx, "a/b.bin", []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "a/b.bin")
		if err != nil || string(got) != data {
			t.Fatalf("Get after Put of %d bytes: %d bytes, %v", len(data), len(got), err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Put(cctx, "a/c.bin", []byte("never")); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	if ok, err := s.Exists(ctx, "a/c.bin"); err != nil || ok {
		t.Errorf("after a cancelled Put: exists %v, %v; want nothing", ok, err)
	}
}

func TestLatestAccuracy(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	sk, _ := SweepKeys("s")
	pk, _ := sk.Point("p00000000000000000000000000000000")
	// eval_every 3 over 8 rounds: rounds 0, 3, 6 and 8 evaluated. Round 7's
	// manifest is missing, round 6's is damaged in the second half, and
	// round 10 (of another schedule) was never written.
	commits := make([]Commit, 11)
	for r := range commits {
		commits[r].Round = r
		if r%3 == 0 || r == 8 {
			commits[r].Evaluated, commits[r].TestAcc = true, 0.05+float64(r)/10
		}
		if r == 7 || r > 8 {
			continue
		}
		if err := s.PutJSON(ctx, pk.Committed(r), commits[r]); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		last, every int
		from        int // the round whose accuracy is shown; -1: unknown
	}{
		{0, 3, 0}, {1, 3, 0}, {2, 3, 0}, {3, 3, 3}, {5, 3, 3},
		{8, 3, 8},  // round 8 itself is evaluated: its own
		{7, 0, 0},  // eval_every 0: only round 0 (and the last) evaluate
		{5, 4, -1}, // round 4 is not evaluated in this store: unknown
	}
	for _, tt := range tests {
		want := 0.0
		if tt.from >= 0 {
			want = commits[tt.from].TestAcc
		}
		if acc, err := s.LatestAccuracy(ctx, pk, commits[tt.last], tt.every); acc != want || err != nil {
			t.Errorf("LatestAccuracy(round %d, eval_every %d) = %v, %v; want %v", tt.last, tt.every, acc, err, want)
		}
	}
	if err := s.Put(ctx, pk.Committed(6), []byte("{damaged")); err != nil {
		t.Fatal(err)
	}
	if acc, err := s.LatestAccuracy(ctx, pk, commits[7], 3); acc != 0 || err != nil {
		t.Errorf("damaged round 6: LatestAccuracy = %v, %v; want 0 (unknown), no error", acc, err)
	}
	if acc, err := s.LatestAccuracy(ctx, pk, commits[10], 5); acc != 0 || err != nil {
		t.Errorf("missing round 10: LatestAccuracy = %v, %v; want 0 (unknown), no error", acc, err)
	}
}
