// Package flsweep_test holds repository-wide checks.
package flsweep_test

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/flsweep/flsweep"

// list returns, for every package in the module, the packages named by the
// template field (Imports: direct; Deps: transitive), tests excluded.
func list(t *testing.T, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .`+field+`}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		m[f[0]] = f[1:]
	}
	return m
}

// TestArchitecture enforces the dependency rules of STYLE.md B1: the plain
// packages never import Temporal; workflows import neither blob storage,
// Parquet nor gorgonia (not even indirectly); only trainer imports gorgonia.
// The attacks see the system through trainer alone: attack depends on no
// package of the module but fl, qp and trainer (with trainer's internal
// packages; no engine, no storage).
func TestArchitecture(t *testing.T) {
	attackOK := map[string]bool{module + "/fl": true, module + "/qp": true, module + "/trainer": true}
	temporalOK := map[string]bool{"workflows": true, "activities": true, "worker": true, "cmd/starter": true, "integration": true, "temporalclient": true}
	direct := list(t, "Imports")
	for pkg, ds := range list(t, "Deps") {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, d := range ds {
			switch {
			case strings.HasPrefix(d, "go.temporal.io/") && !temporalOK[rel]:
				t.Errorf("%s imports %s: plain packages must not depend on Temporal", rel, d)
			case rel == "workflows" && (strings.HasPrefix(d, "gocloud.dev") || strings.HasPrefix(d, "github.com/parquet-go") || strings.HasPrefix(d, "gorgonia.org")):
				t.Errorf("workflows depends on %s: workflows only orchestrate", d)
			case rel == "attack" && strings.HasPrefix(d, module+"/") && !attackOK[d] && !strings.HasPrefix(d, module+"/trainer/internal/"):
				t.Errorf("attack depends on %s: the attacks read only fl, qp and trainer", d)
			}
		}
		for _, d := range direct[pkg] {
			if strings.HasPrefix(d, "gorgonia.org/") && rel != "trainer" {
				t.Errorf("%s imports %s: only trainer may import gorgonia", rel, d)
			}
		}
	}
}
