package validate

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInitScript runs infra/k8s/temporal/scripts/init-temporal.sh (the
// compose service temporal-init and the Job temporal-init) with /bin/sh
// against a real Temporal dev server on loopback, twice: it creates a
// namespace and registers workflows.SearchAttributes with the server's types,
// and running it again changes nothing and succeeds. The Temporal CLI comes
// from TEMPORAL_CLI (`make bin/temporal`; `make validate-infra` passes it);
// without it the test skips.
func TestInitScript(t *testing.T) {
	f := facts(t)
	cli := os.Getenv("TEMPORAL_CLI")
	if cli == "" {
		cli = f.path("bin", "temporal")
	}
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("no Temporal CLI at %s (set TEMPORAL_CLI or run `make bin/temporal`): %v", cli, err)
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(freePort(t)), "--metrics-port", fmt.Sprint(freePort(t)),
		"--log-level", "error")
	srv.Stdout, srv.Stderr = os.Stderr, os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}()

	// The script calls `temporal` from PATH, as in the admin-tools image.
	bin := t.TempDir()
	if err := os.Symlink(cli, filepath.Join(bin, "temporal")); err != nil {
		t.Fatal(err)
	}
	script := f.path("infra", "k8s", "temporal", "scripts", "init-temporal.sh")
	const ns = "flsweep-init"
	run := func() string {
		cmd := exec.CommandContext(ctx, "/bin/sh", script)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "TEMPORAL_ADDRESS=" + addr, "TEMPORAL_NAMESPACE=" + ns}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("init-temporal.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	run()
	out := run()
	if !strings.Contains(out, "init-temporal: namespace "+ns) {
		t.Errorf("second run printed %q", out)
	}

	list, err := exec.CommandContext(ctx, cli, "operator", "search-attribute", "list", "--address", addr, "--namespace", ns, "-o", "json").Output()
	if err != nil {
		t.Fatalf("search-attribute list: %v", err)
	}
	got := map[string]string{}
	for name := range f.attrs {
		// The JSON output maps each custom attribute to its type's enum name
		// (INDEXED_VALUE_TYPE_KEYWORD, ...).
		i := strings.Index(string(list), `"`+name+`"`)
		if i < 0 {
			continue
		}
		rest := string(list[i+len(name)+2:])
		if j := strings.Index(rest, "INDEXED_VALUE_TYPE_"); j >= 0 {
			typ := rest[j+len("INDEXED_VALUE_TYPE_"):]
			typ = typ[:strings.IndexAny(typ, `"`)]
			got[name] = map[string]string{"KEYWORD": "Keyword", "INT": "Int", "DOUBLE": "Double", "TEXT": "Text", "BOOL": "Bool", "DATETIME": "Datetime", "KEYWORD_LIST": "KeywordList"}[typ]
		}
	}
	for name, typ := range f.attrs {
		if got[name] != typ {
			t.Errorf("after init-temporal.sh, %s is %q on the server; want %s", name, got[name], typ)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
