package validate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

func loadCompose(t *testing.T, f *repoFacts) *types.Project {
	t.Helper()
	p, err := LoadCompose(context.Background(), f.path("infra", "compose", "docker-compose.yml"))
	if err != nil {
		t.Fatalf("compose-go does not load infra/compose/docker-compose.yml: %v", err)
	}
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	return s
}

func envNames(e types.MappingWithEquals) []string {
	var out []string
	for k := range e {
		out = append(out, k)
	}
	return sortedCopy(out)
}

// TestCompose loads the compose file with compose-go (interpolation from the
// .env beside it, which is infra/versions.env, and the compose
// specification's schema) and checks it against the repository.
func TestCompose(t *testing.T) {
	f := facts(t)
	p := loadCompose(t, f)
	v := f.versions

	// The .env compose reads is infra/versions.env itself.
	if target, err := filepath.EvalSymlinks(f.path("infra", "compose", ".env")); err != nil || target != f.path("infra", "versions.env") {
		t.Errorf("infra/compose/.env must link to ../versions.env (compose's default env file): %q, %v", target, err)
	}

	wantImages := map[string]string{
		"postgresql":      "postgres:" + v["POSTGRES_MAJOR"],
		"temporal-schema": "temporalio/admin-tools:" + v["TEMPORAL_SERVER_VERSION"],
		"temporal":        "temporalio/server:" + v["TEMPORAL_SERVER_VERSION"],
		"temporal-init":   "temporalio/admin-tools:" + v["TEMPORAL_SERVER_VERSION"],
		"temporal-ui":     "temporalio/ui:" + v["TEMPORAL_UI_VERSION"],
	}
	for name, want := range wantImages {
		if got := service(t, p, name).Image; got != want {
			t.Errorf("compose service %s runs %s; infra/versions.env wants %s", name, got, want)
		}
	}

	// The server: the image's embedded config template reads its environment.
	srv := service(t, p, "temporal")
	for _, n := range envNames(srv.Environment) {
		if !f.serverEnv[n] {
			t.Errorf("compose service temporal sets %s, which the server %s's config template does not read", n, v["TEMPORAL_SERVER_VERSION"])
		}
	}
	if db := srv.Environment["DB"]; db == nil || *db != "postgres12" {
		t.Errorf("compose service temporal: DB = %v; want postgres12 (the sql plugin the schema setup uses)", db)
	}
	checkDynamicConfigMount(t, f, "compose service temporal", srv)

	// The setup services run the shared scripts with the variables they read.
	for name, script := range map[string]string{"temporal-schema": "setup-schema.sh", "temporal-init": "init-temporal.sh"} {
		s := service(t, p, name)
		path := f.path("infra", "k8s", "temporal", "scripts", script)
		if !mountsDir(s, filepath.Dir(path), "/scripts") || strings.Join(s.Entrypoint, " ") != "/bin/sh /scripts/"+script {
			t.Errorf("compose service %s must mount infra/k8s/temporal/scripts at /scripts and run /bin/sh /scripts/%s; entrypoint %q, volumes %+v", name, script, s.Entrypoint, s.Volumes)
		}
		checkScriptEnv(t, "compose service "+name, path, envNames(s.Environment))
	}

	// The flsweep services: what the binaries read, the worker's flags, a
	// grace period that covers the worker's stop timeout, two workers.
	built := 0
	for _, s := range p.AllServices() {
		if s.Build == nil {
			continue
		}
		built++
		if s.Build.Dockerfile != "infra/compose/Dockerfile" {
			t.Errorf("compose service %s builds %s; want infra/compose/Dockerfile", s.Name, s.Build.Dockerfile)
		}
		if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil {
			t.Errorf("compose service %s: %v", s.Name, err)
		}
		f.checkClientEnv(t, "compose service "+s.Name, envNames(s.Environment))
	}
	if built < 3 {
		t.Errorf("compose builds %d flsweep services; want data, worker and starter", built)
	}
	w := service(t, p, "worker")
	f.checkWorkerArgs(t, "compose service worker", w.Command)
	if w.StopGracePeriod == nil || time.Duration(*w.StopGracePeriod) < time.Duration(f.stopTimeout)*time.Second {
		t.Errorf("compose service worker: stop_grace_period %v is shorter than the worker's WorkerStopTimeout (%d s)", w.StopGracePeriod, f.stopTimeout)
	}
	if w.Deploy == nil || w.Deploy.Replicas == nil || *w.Deploy.Replicas < 2 {
		t.Errorf("compose service worker: want deploy.replicas >= 2 (two workers share the queue)")
	}
	init := service(t, p, "temporal-init")
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE"} {
		if a, b := init.Environment[k], w.Environment[k]; a == nil || b == nil || *a != *b {
			t.Errorf("compose service temporal-init sets up %s %v; the workers use %v", k, deref(a), deref(b))
		}
	}
	if q := w.Environment["FLSWEEP_QUEUE"]; q == nil || *q != "fl" {
		t.Errorf("compose service worker: FLSWEEP_QUEUE = %v; want fl", q)
	}
}

func mountsDir(s types.ServiceConfig, source, target string) bool {
	for _, m := range s.Volumes {
		if m.Type == types.VolumeTypeBind && filepath.Clean(m.Source) == filepath.Clean(source) && m.Target == target {
			return true
		}
	}
	return false
}

// checkDynamicConfigMount checks that the server's DYNAMIC_CONFIG_FILE_PATH is
// the shared dynamic config file, mounted.
func checkDynamicConfigMount(t *testing.T, f *repoFacts, where string, s types.ServiceConfig) {
	t.Helper()
	p := s.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	if p == nil {
		t.Errorf("%s: no DYNAMIC_CONFIG_FILE_PATH", where)
		return
	}
	want := f.path("infra", "k8s", "temporal", "dynamicconfig.yaml")
	for _, m := range s.Volumes {
		if m.Target == *p {
			if filepath.Clean(m.Source) != want {
				t.Errorf("%s mounts %s at %s; want %s", where, m.Source, *p, want)
			}
			return
		}
	}
	t.Errorf("%s: nothing is mounted at DYNAMIC_CONFIG_FILE_PATH %s", where, *p)
}

// TestDynamicConfig checks the shared dynamic config against the production
// script's (infra/server/dynamicconfig.yaml), when that exists.
func TestDynamicConfig(t *testing.T) {
	f := facts(t)
	ours := readYAML(t, f.path("infra", "k8s", "temporal", "dynamicconfig.yaml"))
	if len(ours) == 0 {
		t.Fatal("infra/k8s/temporal/dynamicconfig.yaml is empty")
	}
	prod := f.path("infra", "server", "dynamicconfig.yaml")
	if _, err := os.Stat(prod); err != nil {
		t.Skipf("no %s (the production script's server config has not landed): nothing to compare", prod)
	}
	if theirs := readYAML(t, prod); !reflect.DeepEqual(ours, theirs) {
		t.Errorf("infra/k8s/temporal/dynamicconfig.yaml = %v; infra/server/dynamicconfig.yaml = %v: make them equal", ours, theirs)
	}
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestDockerfile checks what the deployments assume of the flsweep image
// (infra/compose/Dockerfile): its entrypoint is the worker (the compose
// worker and the Kubernetes worker pass flags only), the starter is
// /usr/local/bin/starter (the data service, the init container, README's
// `kubectl exec ... starter`), and the examples are in /examples.
func TestDockerfile(t *testing.T) {
	f := facts(t)
	src := string(mustRead(t, f.path("infra", "compose", "Dockerfile")))
	var final []string // the instructions of the last stage
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "FROM ") {
			final = nil
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			final = append(final, line)
		}
	}
	has := func(want string) bool {
		for _, l := range final {
			if l == want {
				return true
			}
		}
		return false
	}
	for _, want := range []string{
		`ENTRYPOINT ["/usr/local/bin/worker"]`,
		"COPY --from=build /out/worker /out/starter /usr/local/bin/",
		"COPY examples /examples",
	} {
		if !has(want) {
			t.Errorf("the final stage of infra/compose/Dockerfile has no %q, which the deployments assume", want)
		}
	}
	p := loadCompose(t, f)
	for _, name := range []string{"data", "starter"} {
		if ep := service(t, p, name).Entrypoint; len(ep) == 0 || ep[0] != "/usr/local/bin/starter" {
			t.Errorf("compose service %s runs %v; the image's starter is /usr/local/bin/starter", name, ep)
		}
	}
	if w := service(t, p, "worker"); len(w.Entrypoint) != 0 {
		t.Errorf("compose service worker overrides the entrypoint (%v): the image's is the worker", w.Entrypoint)
	}
}

func deref(p *string) string {
	if p == nil {
		return "(unset)"
	}
	return *p
}
