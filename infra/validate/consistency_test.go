package validate

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestSearchAttributes checks that every setup registers exactly
// workflows.SearchAttributes: the scripts the compose file and the manifests
// share, the dev server's script, and the production script's, when it exists.
func TestSearchAttributes(t *testing.T) {
	f := facts(t)
	got, err := ScriptAttributes(f.path("infra", "k8s", "temporal", "scripts", "init-temporal.sh"))
	if err != nil {
		t.Fatal(err)
	}
	checkAttrs(t, "infra/k8s/temporal/scripts/init-temporal.sh", got, f.attrs)

	dev := map[string]string{}
	for _, m := range regexp.MustCompile(`\b(FL[A-Za-z]+)=([A-Za-z]+)\b`).FindAllStringSubmatch(string(mustRead(t, f.path("infra", "dev", "temporal.sh"))), -1) {
		dev[m[1]] = m[2]
	}
	checkAttrs(t, "infra/dev/temporal.sh", dev, f.attrs)

	prod := f.path("infra", "server", "init.sh")
	if _, err := os.Stat(prod); err != nil {
		t.Logf("no %s yet: the production script's list is not compared", prod)
		return
	}
	theirs, err := ScriptAttributes(prod)
	if err != nil {
		t.Fatal(err)
	}
	checkAttrs(t, "infra/server/init.sh", theirs, f.attrs)
}

// TestSchemaSetup checks the schema setup: the schemas it applies exist in
// the server module at the pinned version (the admin-tools image embeds the
// same), and are those the production script applies, when it exists.
func TestSchemaSetup(t *testing.T) {
	f := facts(t)
	ours, err := ScriptSchemas(f.path("infra", "k8s", "temporal", "scripts", "setup-schema.sh"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"postgresql/v12/temporal", "postgresql/v12/visibility"}
	if !reflect.DeepEqual(ours, want) {
		t.Errorf("setup-schema.sh applies %v; want %v", ours, want)
	}
	for _, s := range ours {
		if _, err := os.Stat(filepath.Join(f.serverDir, "schema", filepath.FromSlash(s), "versioned")); err != nil {
			t.Errorf("setup-schema.sh applies %s, which the server %s does not have: %v", s, f.versions["TEMPORAL_SERVER_VERSION"], err)
		}
	}
	if !regexp.MustCompile(`(?m)^export SQL_PLUGIN=postgres12$`).Match(mustRead(t, f.path("infra", "k8s", "temporal", "scripts", "setup-schema.sh"))) {
		t.Errorf("setup-schema.sh does not use the postgres12 plugin the server's DB names")
	}
	prod := f.path("infra", "server", "setup-schema.sh")
	if _, err := os.Stat(prod); err != nil {
		t.Logf("no %s yet: the production script's schemas are not compared", prod)
		return
	}
	theirs, err := ScriptSchemas(prod)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ours, theirs) {
		t.Errorf("setup-schema.sh applies %v; infra/server/setup-schema.sh applies %v", ours, theirs)
	}
}

// TestProductionScript checks the client environment the production script
// hands to workers and starters (infra/prod/stack.sh, `stack.sh env`): the
// binaries read every name, and the manifests set the same ones.
func TestProductionScript(t *testing.T) {
	f := facts(t)
	path := f.path("infra", "prod", "stack.sh")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s (the production script has not landed): nothing to compare", path)
	}
	var names []string
	for _, m := range regexp.MustCompile(`echo "([A-Z][A-Z0-9_]*)=`).FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	if len(names) < 5 {
		t.Fatalf("%s: found %d client variables (echo \"NAME=...\"); has client_env changed?", path, len(names))
	}
	f.checkClientEnv(t, "infra/prod/stack.sh", names)
	b := build(t, f)
	set, _ := b.envOf(b.container(t, "Deployment/worker", "worker"))
	have := map[string]bool{}
	for _, n := range set {
		have[n] = true
	}
	for _, n := range names {
		if !have[n] && !awaitedEnv[n] && n != "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION" {
			t.Errorf("infra/prod/stack.sh gives its workers %s; the Kubernetes workers do not get it", n)
		}
	}
}

// TestReadmeSecrets checks that README "Running on a cluster" tells a lab to
// create every Secret the manifests read, with its keys.
func TestReadmeSecrets(t *testing.T) {
	f := facts(t)
	readme := string(mustRead(t, f.path("README.md")))
	for name, ks := range secrets {
		if !strings.Contains(readme, "create secret generic "+name+" ") {
			t.Errorf("README does not show `kubectl -n flsweep create secret generic %s`", name)
		}
		for _, k := range ks {
			if !strings.Contains(readme, "--from-literal="+k+"=") {
				t.Errorf("README does not show the key %s of secret %s (--from-literal=%s=...)", k, name, k)
			}
		}
	}
}
