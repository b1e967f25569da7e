// Package validate checks the deployments of infra/ (the compose file,
// infra/compose/docker-compose.yml, and the Kubernetes manifests, infra/k8s)
// with the libraries their tools use, and against the repository they deploy:
//
//   - the compose file is loaded, interpolated and validated against the
//     compose specification's schema by compose-go (the library of docker
//     compose itself);
//   - the kustomizations are built by kustomize's library (what `kubectl
//     apply -k` runs), every built object is decoded strictly into the real
//     k8s.io/api types (an unknown or duplicate field fails), and KEDA's
//     objects are pruned and validated against the OpenAPI schemas (and CEL
//     rules) of KEDA's own CRDs, taken from the kedacore/keda/v2 module, with
//     the API server's code (k8s.io/apiextensions-apiserver);
//   - the versions, search attributes, environment names, worker flags,
//     schema setup and dynamic config agree with infra/versions.env,
//     workflows/types.go, conf/, worker/main.go, the server module at the
//     pinned version, and the production script's files under infra/server
//     and infra/prod when they exist.
//
// It is its own module so that the main module does not carry these
// libraries. Run it with `make validate-infra` (part of `make test`).
package validate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Root returns the repository's root: two levels above this module.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "infra", "versions.env")); err != nil {
		return "", fmt.Errorf("validate: %s is not the repository root (no infra/versions.env): %w", root, err)
	}
	return root, nil
}

// Versions reads infra/versions.env: NAME=VALUE lines, # comments.
func Versions(root string) (map[string]string, error) {
	return readEnvFile(filepath.Join(root, "infra", "versions.env"))
}

func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q is not NAME=VALUE", path, n, line)
		}
		out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return out, sc.Err()
}

func parseGoFiles(dir string) ([]*ast.File, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("validate: no Go files in %s", dir)
	}
	return files, nil
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// SearchAttributes reads the map literal workflows.SearchAttributes (name →
// type) from workflows/*.go.
func SearchAttributes(root string) (map[string]string, error) {
	files, err := parseGoFiles(filepath.Join(root, "workflows"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if name.Name != "SearchAttributes" || i >= len(vs.Values) {
						continue
					}
					cl, ok := vs.Values[i].(*ast.CompositeLit)
					if !ok {
						return nil, fmt.Errorf("validate: workflows.SearchAttributes is not a map literal")
					}
					out := map[string]string{}
					for _, el := range cl.Elts {
						kv := el.(*ast.KeyValueExpr)
						k, ok1 := stringLit(kv.Key)
						v, ok2 := stringLit(kv.Value)
						if !ok1 || !ok2 {
							return nil, fmt.Errorf("validate: workflows.SearchAttributes has a non-literal entry")
						}
						out[k] = v
					}
					return out, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("validate: no var SearchAttributes in workflows/")
}

var envNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// mainPackages are the binaries the deployments run.
var mainPackages = []string{"worker", filepath.Join("cmd", "starter")}

// localImports returns the directories of the main packages and of the
// packages of this repository they import directly (conf, the Temporal
// client's package, ...), wherever those live.
func localImports(root string, mains ...string) ([]string, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(mod)
	if m == nil {
		return nil, fmt.Errorf("validate: no module line in go.mod")
	}
	prefix := string(m[1]) + "/"
	seen := map[string]bool{}
	var dirs []string
	for _, main := range mains {
		if !seen[main] {
			seen[main] = true
			dirs = append(dirs, main)
		}
		files, err := parseGoFiles(filepath.Join(root, main))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if d, ok := strings.CutPrefix(p, prefix); ok && !seen[d] {
					seen[d] = true
					dirs = append(dirs, filepath.FromSlash(d))
				}
			}
		}
	}
	return dirs, nil
}

// EnvNames returns the environment variables the starter and the worker read:
// the string constants named Env* and the literal arguments of calls to
// Getenv, LookupEnv and envOr, in the two main packages and the packages of
// this repository they import.
func EnvNames(root string) (map[string]bool, error) {
	dirs, err := localImports(root, mainPackages...)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, dir := range dirs {
		files, err := parseGoFiles(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ValueSpec:
					for i, name := range n.Names {
						if !strings.HasPrefix(name.Name, "Env") || i >= len(n.Values) {
							continue
						}
						if s, ok := stringLit(n.Values[i]); ok && envNameRE.MatchString(s) {
							out[s] = true
						}
					}
				case *ast.CallExpr:
					var fn string
					switch f := n.Fun.(type) {
					case *ast.Ident:
						fn = f.Name
					case *ast.SelectorExpr:
						fn = f.Sel.Name
					}
					if (fn == "Getenv" || fn == "LookupEnv" || fn == "envOr") && len(n.Args) > 0 {
						if s, ok := stringLit(n.Args[0]); ok && envNameRE.MatchString(s) {
							out[s] = true
						}
					}
				}
				return true
			})
		}
	}
	return out, nil
}

// WorkerFlags returns the flags the worker defines: the names of
// fs.String/Int/Bool/Duration(...) and fs.XxxVar(&v, ...) calls in worker/ and
// the packages of this repository it imports (which may register shared
// flags, such as the Temporal client's).
func WorkerFlags(root string) (map[string]bool, error) {
	dirs, err := localImports(root, "worker")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, dir := range dirs {
		files, err := parseGoFiles(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				m := sel.Sel.Name
				arg := -1
				switch m {
				case "String", "Int", "Int64", "Uint", "Bool", "Duration", "Float64":
					arg = 0
				case "Func", "BoolFunc":
					arg = 0
				case "StringVar", "IntVar", "Int64Var", "UintVar", "BoolVar", "DurationVar", "Float64Var", "Var":
					arg = 1
				}
				if arg >= 0 && len(call.Args) > arg+1 {
					if s, ok := stringLit(call.Args[arg]); ok {
						out[s] = true
					}
				}
				return true
			})
		}
	}
	if !out["queue"] || !out["slots"] {
		return nil, fmt.Errorf("validate: found no --queue or --slots flag in worker/ (found %v): has the worker's flag parsing moved?", keys(out))
	}
	return out, nil
}

var stopTimeoutRE = regexp.MustCompile(`WorkerStopTimeout:\s*(\d+)\s*\*\s*time\.(Second|Minute)`)

// WorkerStopTimeout reads worker.Options.WorkerStopTimeout from
// worker/main.go, in seconds.
func WorkerStopTimeout(root string) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, "worker", "main.go"))
	if err != nil {
		return 0, err
	}
	m := stopTimeoutRE.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("validate: no `WorkerStopTimeout: N * time.Second` in worker/main.go; update WorkerStopTimeout in infra/validate")
	}
	n, _ := strconv.Atoi(string(m[1]))
	if string(m[2]) == "Minute" {
		n *= 60
	}
	return n, nil
}

// ModuleDir returns the directory of a module version, downloading it through
// the module proxy (go mod download) when it is not in the module cache.
func ModuleDir(path, version string) (string, error) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "mod", "download", "-json", path+"@"+version)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", path, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", path, version, err)
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory in %s", path, version, out)
	}
	return info.Dir, nil
}

var templateEnvRE = regexp.MustCompile(`env "([A-Z0-9_]+)"`)

// ServerTemplateEnv returns the environment names that the server image's
// embedded config template reads (common/config/config_template_embedded.yaml
// of go.temporal.io/server at the version).
func ServerTemplateEnv(serverDir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(serverDir, "common", "config", "config_template_embedded.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, m := range templateEnvRE.FindAllSubmatch(b, -1) {
		out[string(m[1])] = true
	}
	if len(out) < 20 {
		return nil, fmt.Errorf("validate: only %d env names in the server's config template", len(out))
	}
	return out, nil
}

var attrsRE = regexp.MustCompile(`ATTRS="([^"]*)"`)

// ScriptAttributes reads the ATTRS="Name=Type ..." list of a setup script.
func ScriptAttributes(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := attrsRE.FindSubmatch(b)
	if m == nil {
		return nil, fmt.Errorf("%s: no ATTRS=\"...\" list", path)
	}
	out := map[string]string{}
	for _, a := range strings.Fields(string(m[1])) {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q in ATTRS is not Name=Type", path, a)
		}
		out[k] = v
	}
	return out, nil
}

var schemaNameRE = regexp.MustCompile(`:(postgresql/v\d+/[a-z_]+)"`)

// ScriptSchemas reads the schema names (postgresql/v12/temporal, ...) a
// schema-setup script hands to temporal-sql-tool.
func ScriptSchemas(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range schemaNameRE.FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	sort.Strings(out)
	return out, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
