package validate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSchemaScript runs infra/k8s/temporal/scripts/setup-schema.sh (the
// compose service temporal-schema and the Job temporal-schema) with /bin/sh
// against a real PostgreSQL of infra/versions.env's major version, with the
// server's temporal-sql-tool, twice: both databases end at the newest schema
// version of the server module at the pinned version, and the second run
// changes nothing and succeeds. It needs Debian's PostgreSQL
// (/usr/lib/postgresql/<major>/bin, `make postgres`) and the tool
// (TEMPORAL_SQL_TOOL or bin/temporal-sql-tool, `make bin/temporal-server`);
// without them it skips.
func TestSchemaScript(t *testing.T) {
	f := facts(t)
	tool := os.Getenv("TEMPORAL_SQL_TOOL")
	if tool == "" {
		tool = f.path("bin", "temporal-sql-tool")
	}
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("no temporal-sql-tool at %s (set TEMPORAL_SQL_TOOL or build it): %v", tool, err)
	}
	pgBin := filepath.Join("/usr/lib/postgresql", f.versions["POSTGRES_MAJOR"], "bin")
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		t.Skipf("no PostgreSQL %s in %s (apt-get install postgresql-%s): %v", f.versions["POSTGRES_MAJOR"], pgBin, f.versions["POSTGRES_MAJOR"], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// A private cluster on a free loopback port. PostgreSQL refuses to run as
	// root: as root, the cluster belongs to the postgres user.
	dir, err := os.MkdirTemp("", "flsweep-schema-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	asPG := func(name string, args ...string) *exec.Cmd {
		if os.Geteuid() == 0 {
			return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
		return exec.CommandContext(ctx, name, args...)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	const password = "schema-test"
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := asPG(filepath.Join(pgBin, "initdb"), "-D", data, "-U", "temporal", "--pwfile="+pw,
		"-A", "scram-sha-256", "-E", "UTF8", "--no-locale").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	if out, err := asPG(filepath.Join(pgBin, "pg_ctl"), "-D", data, "-w", "-t", "60", "-l", filepath.Join(dir, "log"),
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s", port, dir), "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	defer func() {
		_ = asPG(filepath.Join(pgBin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").Run()
	}()

	// The script calls temporal-sql-tool from PATH, as in the admin-tools image.
	bin := t.TempDir()
	if err := os.Symlink(tool, filepath.Join(bin, "temporal-sql-tool")); err != nil {
		t.Fatal(err)
	}
	script := f.path("infra", "k8s", "temporal", "scripts", "setup-schema.sh")
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(),
		"POSTGRES_SEEDS=127.0.0.1", "DB_PORT=" + strconv.Itoa(port), "POSTGRES_USER=temporal", "POSTGRES_PWD=" + password}
	for run := 1; run <= 2; run++ {
		cmd := exec.CommandContext(ctx, "/bin/sh", script)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("setup-schema.sh, run %d: %v\n%s", run, err, out)
		}
	}

	for db, schema := range map[string]string{"temporal": "temporal", "temporal_visibility": "visibility"} {
		cmd := exec.CommandContext(ctx, filepath.Join(pgBin, "psql"), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "temporal",
			"-d", db, "-tAc", "SELECT curr_version FROM schema_version")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", db, err, out)
		}
		want := newestVersion(t, filepath.Join(f.serverDir, "schema", "postgresql", "v12", schema, "versioned"))
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("database %s is at schema version %q; the server %s's newest is %s", db, got, f.versions["TEMPORAL_SERVER_VERSION"], want)
		}
	}
}

// newestVersion returns the highest vMAJOR.MINOR directory name, without the v.
func newestVersion(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type ver struct {
		major, minor int
		s            string
	}
	var vs []ver
	for _, e := range entries {
		s := strings.TrimPrefix(e.Name(), "v")
		a, b, ok := strings.Cut(s, ".")
		ma, err1 := strconv.Atoi(a)
		mi, err2 := strconv.Atoi(b)
		if ok && err1 == nil && err2 == nil {
			vs = append(vs, ver{ma, mi, s})
		}
	}
	if len(vs) == 0 {
		t.Fatalf("no versions in %s", dir)
	}
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].major != vs[j].major {
			return vs[i].major < vs[j].major
		}
		return vs[i].minor < vs[j].minor
	})
	return vs[len(vs)-1].s
}
