package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// KEDAVersion is the KEDA release whose CRDs and temporal scaler the
// manifests are checked against (the temporal scaler needs KEDA 2.17 or later).
const KEDAVersion = "v2.21.0"

// externalEnv are variables the flsweep containers set that no flsweep code
// reads by name: the AWS SDK's credentials (gocloud.dev's s3blob), and
// DATASETS, which the workers' init container's shell command reads.
var externalEnv = map[string]bool{"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_REGION": true, "DATASETS": true}

// awaitedEnv are the Temporal client's TLS and API-key variables that the
// production branch adds to conf/ (conf/client.go). Until conf defines them
// the test logs them; once it does, they are checked like the others.
var awaitedEnv = map[string]bool{
	"TEMPORAL_TLS": true, "TEMPORAL_TLS_CLIENT_CERT_PATH": true, "TEMPORAL_TLS_CLIENT_KEY_PATH": true,
	"TEMPORAL_TLS_SERVER_CA_CERT_PATH": true, "TEMPORAL_TLS_SERVER_NAME": true, "TEMPORAL_API_KEY": true,
}

// secrets are the Secrets the manifests reference and README "Running on a
// cluster" tells a lab to create, with their keys.
var secrets = map[string][]string{
	"temporal-postgres": {"password"},
	"flsweep-blob":      {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"},
	"temporal-cloud":    {"api-key"},
}

type repoFacts struct {
	root        string
	versions    map[string]string
	attrs       map[string]string
	env         map[string]bool
	flags       map[string]bool
	stopTimeout int
	serverDir   string
	serverEnv   map[string]bool
	kedaDir     string
}

var (
	factsOnce sync.Once
	factsVal  *repoFacts
	factsErr  error
)

// facts reads what the deployments must agree with, once per test binary.
func facts(t *testing.T) *repoFacts {
	t.Helper()
	factsOnce.Do(func() {
		f := &repoFacts{}
		var err error
		if f.root, err = Root(); err != nil {
			factsErr = err
			return
		}
		if f.versions, err = Versions(f.root); err != nil {
			factsErr = err
			return
		}
		for _, k := range []string{"TEMPORAL_SERVER_VERSION", "TEMPORAL_UI_VERSION", "POSTGRES_MAJOR"} {
			if f.versions[k] == "" {
				factsErr = fmt.Errorf("validate: infra/versions.env has no %s", k)
				return
			}
		}
		if f.attrs, err = SearchAttributes(f.root); err != nil {
			factsErr = err
			return
		}
		if f.env, err = EnvNames(f.root); err != nil {
			factsErr = err
			return
		}
		if f.flags, err = WorkerFlags(f.root); err != nil {
			factsErr = err
			return
		}
		if f.stopTimeout, err = WorkerStopTimeout(f.root); err != nil {
			factsErr = err
			return
		}
		if f.serverDir, err = ModuleDir("go.temporal.io/server", "v"+f.versions["TEMPORAL_SERVER_VERSION"]); err != nil {
			factsErr = err
			return
		}
		if f.serverEnv, err = ServerTemplateEnv(f.serverDir); err != nil {
			factsErr = err
			return
		}
		if f.kedaDir, err = ModuleDir("github.com/kedacore/keda/v2", KEDAVersion); err != nil {
			factsErr = err
			return
		}
		factsVal = f
	})
	if factsErr != nil {
		t.Fatal(factsErr)
	}
	return factsVal
}

func (f *repoFacts) path(rel ...string) string {
	return filepath.Join(append([]string{f.root}, rel...)...)
}

// checkClientEnv checks that every variable set on a flsweep container is one
// the binaries read.
func (f *repoFacts) checkClientEnv(t *testing.T, where string, names []string) {
	t.Helper()
	for _, n := range names {
		switch {
		case f.env[n], externalEnv[n]:
		case awaitedEnv[n]:
			t.Logf("%s: %s is not in conf/ yet (the production branch adds it)", where, n)
		default:
			t.Errorf("%s sets %s, which neither conf/ nor cmd/starter nor worker/ reads (known: %v); fix the name", where, n, keys(f.env))
		}
	}
}

// checkWorkerArgs checks that every --flag of a worker's command line is one
// the worker defines.
func (f *repoFacts) checkWorkerArgs(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !f.flags[name] {
			t.Errorf("%s passes %s, which worker/main.go does not define (flags: %v)", where, a, keys(f.flags))
		}
	}
}

// checkScriptEnv checks that the variables given to a setup script are ones
// it reads, and that it gets the ones it requires.
func checkScriptEnv(t *testing.T, where, script string, given []string) {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	have := map[string]bool{}
	for _, n := range given {
		have[n] = true
		if !regexp.MustCompile(`\$\{?` + n + `\b`).MatchString(src) {
			t.Errorf("%s sets %s, which %s does not read", where, n, filepath.Base(script))
		}
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Z_]+):\?`).FindAllStringSubmatch(src, -1) {
		if !have[m[1]] {
			t.Errorf("%s does not set %s, which %s requires", where, m[1], filepath.Base(script))
		}
	}
}

func checkAttrs(t *testing.T, where string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("workflows.SearchAttributes is empty")
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s registers %s as %q; workflows.SearchAttributes has %q", where, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s registers %s, which workflows.SearchAttributes does not have", where, k)
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
