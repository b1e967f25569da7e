// Package flsweep_test holds repository-wide checks.
package flsweep_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
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
// package of the module but fl, qp and trainer (with what trainer depends
// on, its kernels in internal/; no engine, no storage). The packages in
// internal/ (the trainer's kernels, shared helpers) depend on no package of
// the module outside internal/, so that any package may use them.
func TestArchitecture(t *testing.T) {
	attackOK := map[string]bool{module + "/fl": true, module + "/qp": true, module + "/trainer": true, module + "/errkind": true}
	temporalOK := map[string]bool{"workflows": true, "activities": true, "worker": true, "cmd/starter": true, "integration": true, "temporalclient": true}
	direct := list(t, "Imports")
	deps := list(t, "Deps")
	for _, d := range deps[module+"/trainer"] {
		attackOK[d] = true
	}
	for pkg, ds := range deps {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, d := range ds {
			switch {
			case strings.HasPrefix(d, "go.temporal.io/") && !temporalOK[rel]:
				t.Errorf("%s imports %s: plain packages must not depend on Temporal", rel, d)
			case rel == "workflows" && (strings.HasPrefix(d, "gocloud.dev") || strings.HasPrefix(d, "github.com/parquet-go") || strings.HasPrefix(d, "gorgonia.org")):
				t.Errorf("workflows depends on %s: workflows only orchestrate", d)
			case rel == "attack" && strings.HasPrefix(d, module+"/") && !attackOK[d]:
				t.Errorf("attack depends on %s: the attacks read only fl, qp and trainer", d)
			case strings.HasPrefix(rel, "internal/") && strings.HasPrefix(d, module+"/") && !strings.HasPrefix(d, module+"/internal/"):
				t.Errorf("%s depends on %s: the packages in internal/ depend on nothing of the module outside internal/", rel, d)
			}
		}
		for _, d := range direct[pkg] {
			if strings.HasPrefix(d, "gorgonia.org/") && rel != "trainer" {
				t.Errorf("%s imports %s: only trainer may import gorgonia", rel, d)
			}
		}
	}
}

// unkinded are the package-level sentinels declared with errors.New, not
// errkind.New, and why: each is matched by its callers before it can reach
// a step's result.
var unkinded = map[string]string{
	"store.ErrNotFound":       "a missing blob is damage only where the protocol guarantees it (the engine's errMissing); elsewhere callers test for it",
	"gp.ErrNotPD":             "FedCor wraps it as fl.ErrDiverged",
	"results.ErrNoTables":     "the claims scorecard reads it as \"not run\"",
	"attack.ErrNotApplicable": "the engine records the attack as not applicable",
	"engine.errFanOut":        "a control signal of RunRoundInOne, caught where it is raised",
	"main.errUsage":           "the starter's usage error, read by main for its exit status",
}

// TestSentinelsHaveKinds: every package-level error sentinel is declared
// with errkind.New, so what is retried, recovered or recorded is decided by
// its kind (errkind.Of) and a new package's sentinel cannot become
// retryable unnoticed; the exceptions are listed in unkinded with why.
func TestSentinelsHaveKinds(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					call, ok := v.(*ast.CallExpr)
					if !ok {
						continue
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "New" {
						continue
					}
					if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "errors" {
						continue
					}
					name := f.Name.Name + "." + vs.Names[i].Name
					if !ast.IsExported(vs.Names[i].Name) && !strings.HasPrefix(vs.Names[i].Name, "err") {
						continue
					}
					seen[name] = true
					if _, ok := unkinded[name]; !ok {
						t.Errorf("%s: %s = errors.New(...): declare it with errkind.New and its kind (invalid, refused, damaged, diverged), or list it in unkinded with why", path, name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range unkinded {
		if !seen[name] {
			t.Errorf("unkinded lists %s, which is no longer declared with errors.New: remove it", name)
		}
	}
}
