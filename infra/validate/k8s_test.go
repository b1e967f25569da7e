package validate

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// built is one kustomization's objects, indexed.
type built struct {
	dir        string
	objs       []Object
	configMaps map[string]*corev1.ConfigMap // by name before the hash suffix, and by full name
	services   map[string]*corev1.Service
	pods       map[string]*corev1.PodTemplateSpec // "Kind/name"
	claims     map[string][]string                // a StatefulSet's volumeClaimTemplates, by "Kind/name"
	deploys    map[string]*appsv1.Deployment
}

func build(t *testing.T, f *repoFacts, rel ...string) *built {
	t.Helper()
	dir := f.path(append([]string{"infra", "k8s"}, rel...)...)
	objs, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := &built{dir: dir, objs: objs, configMaps: map[string]*corev1.ConfigMap{}, services: map[string]*corev1.Service{},
		pods: map[string]*corev1.PodTemplateSpec{}, claims: map[string][]string{}, deploys: map[string]*appsv1.Deployment{}}
	for _, o := range objs {
		checkNames(t, o)
		switch x := o.Typed.(type) {
		case *corev1.ConfigMap:
			b.configMaps[x.Name] = x
		case *corev1.Service:
			b.services[x.Name] = x
		case *appsv1.Deployment:
			b.pods["Deployment/"+x.Name] = &x.Spec.Template
			b.deploys[x.Name] = x
			checkSelector(t, "Deployment/"+x.Name, x.Spec.Selector.MatchLabels, x.Spec.Template.Labels)
		case *appsv1.StatefulSet:
			b.pods["StatefulSet/"+x.Name] = &x.Spec.Template
			for _, c := range x.Spec.VolumeClaimTemplates {
				b.claims["StatefulSet/"+x.Name] = append(b.claims["StatefulSet/"+x.Name], c.Name)
			}
			checkSelector(t, "StatefulSet/"+x.Name, x.Spec.Selector.MatchLabels, x.Spec.Template.Labels)
		case *batchv1.Job:
			b.pods["Job/"+x.Name] = &x.Spec.Template
		case *corev1.Namespace:
		case nil:
			if o.Custom == nil {
				t.Errorf("%s: %s/%s is neither a built-in kind nor a KEDA resource", dir, o.Kind, o.Name)
			}
		default:
			t.Errorf("%s: %s/%s is of a kind this test does not check; add it", dir, o.Kind, o.Name)
		}
	}
	return b
}

func checkSelector(t *testing.T, where string, sel, lbls map[string]string) {
	t.Helper()
	if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(lbls)) {
		t.Errorf("%s: selector %v does not match its pod template's labels %v", where, sel, lbls)
	}
}

// configMap returns a generated ConfigMap by its name in the kustomization
// (kustomize appends a content hash).
func (b *built) configMap(name string) *corev1.ConfigMap {
	for full, cm := range b.configMaps {
		if full == name || strings.HasPrefix(full, name+"-") && len(full) == len(name)+11 {
			return cm
		}
	}
	return nil
}

func (b *built) container(t *testing.T, pod, name string) *corev1.Container {
	t.Helper()
	p := b.pods[pod]
	if p == nil {
		t.Fatalf("%s: no %s", b.dir, pod)
	}
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	t.Fatalf("%s: %s has no container %s", b.dir, pod, name)
	return nil
}

// checkPods checks every pod template: resources requested, and every
// ConfigMap, Secret and volume it references exists (Secrets: those README
// tells a lab to create, with their keys).
func (b *built) checkPods(t *testing.T) {
	for where, p := range b.pods {
		vols := map[string]bool{}
		for _, c := range b.claims[where] {
			vols[c] = true
		}
		for _, v := range p.Spec.Volumes {
			vols[v.Name] = true
			if v.ConfigMap != nil && b.configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("%s: volume %s names ConfigMap %s, which the build does not have", where, v.Name, v.ConfigMap.Name)
			}
			if v.Secret != nil {
				checkSecret(t, where, v.Secret.SecretName, "")
			}
		}
		all := append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...)
		for _, c := range all {
			w := where + " container " + c.Name
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
				t.Errorf("%s: requests no cpu or memory", w)
			}
			if c.Image == "" {
				t.Errorf("%s: no image", w)
			}
			for _, m := range c.VolumeMounts {
				if !vols[m.Name] {
					t.Errorf("%s: mounts volume %s, which the pod does not define", w, m.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil && b.configMaps[e.ConfigMapRef.Name] == nil {
					t.Errorf("%s: envFrom ConfigMap %s, which the build does not have", w, e.ConfigMapRef.Name)
				}
				if e.SecretRef != nil {
					checkSecret(t, w, e.SecretRef.Name, "")
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				if r := e.ValueFrom.SecretKeyRef; r != nil {
					checkSecret(t, w, r.Name, r.Key)
				}
				if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
					if cm := b.configMaps[r.Name]; cm == nil || cm.Data[r.Key] == "" {
						t.Errorf("%s: env %s reads ConfigMap %s key %s, which the build does not have", w, e.Name, r.Name, r.Key)
					}
				}
			}
		}
	}
	// Services select pods of the build, on ports they expose.
	for name, s := range b.services {
		found := false
		for where, p := range b.pods {
			if strings.HasPrefix(where, "Job/") || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(p.Labels)) {
				continue
			}
			found = true
			for _, sp := range s.Spec.Ports {
				if !exposes(p, sp.TargetPort.IntValue(), sp.TargetPort.StrVal) {
					t.Errorf("Service/%s: port %s targets %s, which %s does not expose", name, sp.Name, sp.TargetPort.String(), where)
				}
			}
		}
		if !found {
			t.Errorf("Service/%s selects no pod of the build (selector %v)", name, s.Spec.Selector)
		}
	}
}

func exposes(p *corev1.PodTemplateSpec, port int, name string) bool {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if int(cp.ContainerPort) == port || name != "" && cp.Name == name {
				return true
			}
		}
	}
	return false
}

func checkSecret(t *testing.T, where, name, key string) {
	t.Helper()
	ks, ok := secrets[name]
	if !ok {
		t.Errorf("%s: references Secret %s, which README \"Running on a cluster\" does not tell to create (known: %v)", where, name, keys(secrets))
		return
	}
	if key == "" {
		return
	}
	for _, k := range ks {
		if k == key {
			return
		}
	}
	t.Errorf("%s: reads key %s of Secret %s, which has %v", where, key, name, ks)
}

// envOf lists the variables a container gets: its env and the keys of the
// ConfigMaps and Secrets of its envFrom.
func (b *built) envOf(c *corev1.Container) (names []string, values map[string]string) {
	values = map[string]string{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef != nil {
			if cm := b.configMaps[e.ConfigMapRef.Name]; cm != nil {
				for k, v := range cm.Data {
					names = append(names, k)
					values[k] = v
				}
			}
		}
		if e.SecretRef != nil {
			names = append(names, secrets[e.SecretRef.Name]...)
		}
	}
	for _, e := range c.Env {
		names = append(names, e.Name)
		if e.ValueFrom == nil {
			values[e.Name] = e.Value
		}
	}
	return sortedCopy(names), values
}

// checkFleet checks the workers: the binaries read their environment, the
// worker defines their flags, their grace period covers the worker's stop
// timeout, the init container fetches the datasets into the data directory.
func (b *built) checkFleet(t *testing.T, f *repoFacts) map[string]string {
	t.Helper()
	d := b.deploys["worker"]
	if d == nil {
		t.Fatalf("%s: no Deployment worker", b.dir)
	}
	w := b.container(t, "Deployment/worker", "worker")
	names, values := b.envOf(w)
	f.checkClientEnv(t, "Deployment/worker", names)
	f.checkWorkerArgs(t, "Deployment/worker", append(append([]string(nil), w.Command...), w.Args...))
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g < int64(f.stopTimeout) {
		t.Errorf("Deployment/worker: terminationGracePeriodSeconds %v is shorter than the worker's WorkerStopTimeout (%d s)", g, f.stopTimeout)
	}
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "FLSWEEP_QUEUE", "FLSWEEP_BLOB", "FLSWEEP_DATA_DIR"} {
		if values[k] == "" {
			t.Errorf("Deployment/worker: %s is not set", k)
		}
	}
	mounted := false
	for _, m := range w.VolumeMounts {
		mounted = mounted || m.MountPath == values["FLSWEEP_DATA_DIR"]
	}
	if !mounted {
		t.Errorf("Deployment/worker: nothing is mounted at FLSWEEP_DATA_DIR %s", values["FLSWEEP_DATA_DIR"])
	}
	inits := d.Spec.Template.Spec.InitContainers
	if len(inits) != 1 || !strings.Contains(strings.Join(inits[0].Args, " "), "starter data fetch") || !strings.Contains(strings.Join(inits[0].Args, " "), "$DATASETS") {
		t.Errorf("Deployment/worker: want one init container running `starter data fetch` over $DATASETS")
	} else {
		inames, _ := b.envOf(&inits[0])
		f.checkClientEnv(t, "Deployment/worker init container", inames)
	}
	if w.Image != inits[0].Image {
		t.Errorf("Deployment/worker: the init container runs %s, the worker %s: one image holds both binaries", inits[0].Image, w.Image)
	}
	return values
}

// checkScaledObject validates the ScaledObject against KEDA's CRD and checks
// its temporal trigger against the scaler's parameters and the workers'
// settings.
func (b *built) checkScaledObject(t *testing.T, f *repoFacts, workerEnv map[string]string, wantEndpoint string, wantTLS bool) {
	t.Helper()
	crd, err := LoadCRD(filepath.Join(f.kedaDir, "config", "crd", "bases", "keda.sh_scaledobjects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	authCRD, err := LoadCRD(filepath.Join(f.kedaDir, "config", "crd", "bases", "keda.sh_triggerauthentications.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := ScalerParams(f.kedaDir, "temporal")
	if err != nil {
		t.Fatal(err)
	}
	auths := map[string]map[string]any{}
	var sos []Object
	for _, o := range b.objs {
		switch o.Kind {
		case "ScaledObject":
			sos = append(sos, o)
		case "TriggerAuthentication":
			if err := authCRD.Validate(o.Custom); err != nil {
				t.Errorf("TriggerAuthentication/%s against KEDA %s's CRD: %v", o.Name, KEDAVersion, err)
			}
			auths[o.Name] = o.Custom
		}
	}
	if len(sos) != 1 {
		t.Fatalf("%s: %d ScaledObjects; want one, for the workers", b.dir, len(sos))
	}
	so := sos[0]
	if err := crd.Validate(so.Custom); err != nil {
		t.Errorf("ScaledObject/%s against KEDA %s's CRD: %v", so.Name, KEDAVersion, err)
	}
	spec, _ := so.Custom["spec"].(map[string]any)
	target, _ := spec["scaleTargetRef"].(map[string]any)
	if name, _ := target["name"].(string); b.deploys[name] == nil || target["kind"] != nil && target["kind"] != "Deployment" {
		t.Errorf("ScaledObject/%s scales %v, which is not a Deployment of the build", so.Name, target)
	}
	if min, _ := spec["minReplicaCount"].(int64); min < 1 {
		t.Errorf("ScaledObject/%s: minReplicaCount %v; want >= 1 so that workflow tasks never wait for a scale-up", so.Name, spec["minReplicaCount"])
	}
	triggers, _ := spec["triggers"].([]any)
	if len(triggers) != 1 {
		t.Fatalf("ScaledObject/%s: %d triggers; want one temporal trigger", so.Name, len(triggers))
	}
	tr := triggers[0].(map[string]any)
	if tr["type"] != "temporal" {
		t.Errorf("ScaledObject/%s: trigger type %v; want temporal", so.Name, tr["type"])
	}
	md, _ := tr["metadata"].(map[string]any)
	for k, v := range md {
		p, ok := params[k]
		switch {
		case !ok || !p.Trigger:
			t.Errorf("ScaledObject/%s: trigger metadata %s is not a parameter of KEDA %s's temporal scaler (%v)", so.Name, k, KEDAVersion, keys(params))
			continue
		case p.Deprecated != "":
			t.Errorf("ScaledObject/%s: trigger metadata %s is deprecated: %s", so.Name, k, p.Deprecated)
		}
		s := fmt.Sprint(v)
		var perr error
		switch p.GoType {
		case "int", "int64":
			_, perr = strconv.ParseInt(s, 10, 64)
		case "bool":
			_, perr = strconv.ParseBool(s)
		}
		if perr != nil {
			t.Errorf("ScaledObject/%s: trigger metadata %s = %q is not a %s", so.Name, k, s, p.GoType)
		}
	}
	if md["taskQueue"] != workerEnv["FLSWEEP_QUEUE"] {
		t.Errorf("ScaledObject/%s watches task queue %v; the workers serve %q", so.Name, md["taskQueue"], workerEnv["FLSWEEP_QUEUE"])
	}
	if md["namespace"] != workerEnv["TEMPORAL_NAMESPACE"] {
		t.Errorf("ScaledObject/%s watches namespace %v; the workers use %q", so.Name, md["namespace"], workerEnv["TEMPORAL_NAMESPACE"])
	}
	if md["endpoint"] != wantEndpoint {
		t.Errorf("ScaledObject/%s dials %v; want %s", so.Name, md["endpoint"], wantEndpoint)
	}
	known, err := ScalerQueueTypes(f.kedaDir)
	if err != nil {
		t.Fatal(err)
	}
	qt, _ := md["queueTypes"].(string)
	if !strings.Contains(qt, "activity") {
		t.Errorf("ScaledObject/%s: queueTypes %q; the training backlog is in activity tasks", so.Name, qt)
	}
	for _, q := range strings.Split(qt, ",") {
		if !known[strings.TrimSpace(q)] {
			t.Errorf("ScaledObject/%s: queue type %q is not one KEDA's temporal scaler knows (%v)", so.Name, q, keys(known))
		}
	}
	// enableTLS defaults to true in the scaler: it must say false for a
	// plaintext server, true for Temporal Cloud.
	if tls, err := strconv.ParseBool(fmt.Sprint(md["enableTLS"])); err != nil || tls != wantTLS {
		t.Errorf("ScaledObject/%s: enableTLS %v; want %v", so.Name, md["enableTLS"], wantTLS)
	}
	if ref, ok := tr["authenticationRef"].(map[string]any); ok {
		a := auths[fmt.Sprint(ref["name"])]
		if a == nil {
			t.Errorf("ScaledObject/%s: authenticationRef %v names no TriggerAuthentication of the build", so.Name, ref["name"])
		} else {
			aspec, _ := a["spec"].(map[string]any)
			refs, _ := aspec["secretTargetRef"].([]any)
			if len(refs) == 0 {
				t.Errorf("TriggerAuthentication/%v has no secretTargetRef", ref["name"])
			}
			for _, r := range refs {
				r := r.(map[string]any)
				if p, ok := params[fmt.Sprint(r["parameter"])]; !ok || !p.Auth {
					t.Errorf("TriggerAuthentication/%v: parameter %v is not an authentication parameter of the temporal scaler", ref["name"], r["parameter"])
				}
				checkSecret(t, "TriggerAuthentication", fmt.Sprint(r["name"]), fmt.Sprint(r["key"]))
			}
		}
	}
}

// TestKubernetes builds infra/k8s (self-hosted: Temporal on PostgreSQL, MinIO,
// the fleet) with kustomize, decodes every object strictly into the
// k8s.io/api types, validates KEDA's objects against KEDA's CRDs, and checks
// the whole against the repository.
func TestKubernetes(t *testing.T) {
	f := facts(t)
	b := build(t, f)
	v := f.versions
	b.checkPods(t)

	for _, o := range b.objs {
		if o.Kind != "Namespace" && o.Namespace != "flsweep" {
			t.Errorf("%s/%s is in namespace %q; want flsweep", o.Kind, o.Name, o.Namespace)
		}
	}
	images := map[[2]string]string{
		{"StatefulSet/postgres", "postgres"}:    "postgres:" + v["POSTGRES_MAJOR"],
		{"Deployment/temporal", "temporal"}:     "temporalio/server:" + v["TEMPORAL_SERVER_VERSION"],
		{"Job/temporal-schema", "setup-schema"}: "temporalio/admin-tools:" + v["TEMPORAL_SERVER_VERSION"],
		{"Job/temporal-init", "init"}:           "temporalio/admin-tools:" + v["TEMPORAL_SERVER_VERSION"],
		{"Deployment/temporal-ui", "ui"}:        "temporalio/ui:" + v["TEMPORAL_UI_VERSION"],
		{"StatefulSet/minio", "minio"}:          "",
		{"Job/minio-bucket", "mc"}:              "",
		{"Deployment/worker", "worker"}:         "",
	}
	for pc, want := range images {
		c := b.container(t, pc[0], pc[1])
		if want != "" && c.Image != want {
			t.Errorf("%s container %s runs %s; infra/versions.env wants %s", pc[0], pc[1], c.Image, want)
		}
	}
	// MinIO's images are those of the compose file.
	p := loadCompose(t, f)
	for pc, svc := range map[[2]string]string{{"StatefulSet/minio", "minio"}: "minio", {"Job/minio-bucket", "mc"}: "minio-setup"} {
		if got, want := b.container(t, pc[0], pc[1]).Image, service(t, p, svc).Image; got != want {
			t.Errorf("%s runs %s; the compose service %s runs %s", pc[0], got, svc, want)
		}
	}

	// The server.
	srv := b.container(t, "Deployment/temporal", "temporal")
	srvEnv := map[string]string{}
	for _, e := range srv.Env {
		srvEnv[e.Name] = e.Value
		if !f.serverEnv[e.Name] {
			t.Errorf("Deployment/temporal sets %s, which the server %s's config template does not read", e.Name, v["TEMPORAL_SERVER_VERSION"])
		}
	}
	if srvEnv["DB"] != "postgres12" {
		t.Errorf("Deployment/temporal: DB = %q; want postgres12 (the sql plugin the schema setup uses)", srvEnv["DB"])
	}
	if host := srvEnv["POSTGRES_SEEDS"]; b.services[host] == nil {
		t.Errorf("Deployment/temporal: POSTGRES_SEEDS %q is no Service of the build", host)
	}
	dc := srvEnv["DYNAMIC_CONFIG_FILE_PATH"]
	cm := b.configMap("temporal-dynamicconfig")
	if cm == nil || cm.Data[filepath.Base(dc)] == "" {
		t.Errorf("Deployment/temporal: DYNAMIC_CONFIG_FILE_PATH %s is not a key of ConfigMap temporal-dynamicconfig", dc)
	}
	mounted := false
	for _, m := range srv.VolumeMounts {
		mounted = mounted || m.MountPath == filepath.Dir(dc)
	}
	if !mounted {
		t.Errorf("Deployment/temporal: nothing is mounted at %s", filepath.Dir(dc))
	}
	if want := string(mustRead(t, f.path("infra", "k8s", "temporal", "dynamicconfig.yaml"))); cm != nil && cm.Data[filepath.Base(dc)] != want {
		t.Errorf("ConfigMap temporal-dynamicconfig is not infra/k8s/temporal/dynamicconfig.yaml")
	}

	// The setup Jobs run the shared scripts with the variables they read.
	scripts := b.configMap("temporal-scripts")
	for job, script := range map[string]string{"Job/temporal-schema": "setup-schema.sh", "Job/temporal-init": "init-temporal.sh"} {
		pod := b.pods[job]
		c := pod.Spec.Containers[0]
		if strings.Join(c.Command, " ") != "/bin/sh /scripts/"+script {
			t.Errorf("%s runs %q; want /bin/sh /scripts/%s", job, c.Command, script)
		}
		path := f.path("infra", "k8s", "temporal", "scripts", script)
		if scripts == nil || scripts.Data[script] != string(mustRead(t, path)) {
			t.Errorf("ConfigMap temporal-scripts does not hold %s", path)
		}
		names, _ := b.envOf(&c)
		checkScriptEnv(t, job, path, names)
	}
	_, schemaEnv := b.envOf(&b.pods["Job/temporal-schema"].Spec.Containers[0])
	if schemaEnv["POSTGRES_SEEDS"] != srvEnv["POSTGRES_SEEDS"] {
		t.Errorf("Job/temporal-schema sets up %q; the server uses %q", schemaEnv["POSTGRES_SEEDS"], srvEnv["POSTGRES_SEEDS"])
	}

	// The fleet, and its scaling on the backlog of the server of the build.
	workerEnv := b.checkFleet(t, f)
	host, port, err := net.SplitHostPort(workerEnv["TEMPORAL_ADDRESS"])
	if err != nil || b.services[host] == nil || b.services[host].Spec.Ports[0].Port != mustAtoi(t, port) {
		t.Errorf("Deployment/worker: TEMPORAL_ADDRESS %q is not the temporal Service's port", workerEnv["TEMPORAL_ADDRESS"])
	}
	if !strings.Contains(workerEnv["FLSWEEP_BLOB"], "endpoint=http://minio:9000") || b.services["minio"] == nil {
		t.Errorf("Deployment/worker: FLSWEEP_BLOB %q is not the build's MinIO", workerEnv["FLSWEEP_BLOB"])
	}
	_, initEnv := b.envOf(&b.pods["Job/temporal-init"].Spec.Containers[0])
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE"} {
		if initEnv[k] != workerEnv[k] {
			t.Errorf("Job/temporal-init sets up %s %q; the workers use %q", k, initEnv[k], workerEnv[k])
		}
	}
	b.checkScaledObject(t, f, workerEnv, host+".flsweep.svc.cluster.local:"+port, false)
}

// TestKubernetesCloud builds infra/k8s/cloud: the fleet against Temporal
// Cloud with an API key.
func TestKubernetesCloud(t *testing.T) {
	f := facts(t)
	b := build(t, f, "cloud")
	b.checkPods(t)
	for _, name := range []string{"temporal", "postgres", "minio"} {
		if b.services[name] != nil {
			t.Errorf("infra/k8s/cloud has Service/%s: with Temporal Cloud and S3 it needs none", name)
		}
	}
	workerEnv := b.checkFleet(t, f)
	if workerEnv["TEMPORAL_TLS"] != "true" {
		t.Errorf("infra/k8s/cloud: TEMPORAL_TLS = %q; want true", workerEnv["TEMPORAL_TLS"])
	}
	w := b.container(t, "Deployment/worker", "worker")
	apiKey := false
	for _, e := range w.Env {
		apiKey = apiKey || e.Name == "TEMPORAL_API_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !apiKey {
		t.Errorf("infra/k8s/cloud: the worker does not read TEMPORAL_API_KEY from a Secret")
	}
	if strings.Contains(workerEnv["FLSWEEP_BLOB"], "minio") {
		t.Errorf("infra/k8s/cloud: FLSWEEP_BLOB %q still names MinIO", workerEnv["FLSWEEP_BLOB"])
	}
	b.checkScaledObject(t, f, workerEnv, workerEnv["TEMPORAL_ADDRESS"], true)
}

func mustAtoi(t *testing.T, s string) int32 {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Errorf("%q is not a port", s)
	}
	return int32(n)
}

// checkNames checks what the API server's validation would refuse in names,
// labels, ports, environment and ConfigMap keys (the rules of
// k8s.io/apimachinery/pkg/util/validation; the API server's full validation
// of each kind lives in k8s.io/kubernetes, which cannot be imported).
func checkNames(t *testing.T, o Object) {
	t.Helper()
	where := o.Kind + "/" + o.Name
	bad := func(what string, errs []string) {
		if len(errs) > 0 {
			t.Errorf("%s: %s: %s", where, what, strings.Join(errs, "; "))
		}
	}
	if o.Kind == "Service" {
		bad("name", validation.IsDNS1035Label(o.Name))
	} else {
		bad("name", validation.IsDNS1123Subdomain(o.Name))
	}
	var pods []*corev1.PodTemplateSpec
	switch x := o.Typed.(type) {
	case *corev1.ConfigMap:
		for k := range x.Data {
			bad("key "+k, validation.IsConfigMapKey(k))
		}
		bad("labels", errStrings(metav1validation.ValidateLabels(x.Labels, field.NewPath("metadata", "labels"))))
	case *corev1.Service:
		for _, p := range x.Spec.Ports {
			bad("port "+p.Name, validation.IsValidPortNum(int(p.Port)))
			bad("port name", validation.IsValidPortName(p.Name))
		}
	case *appsv1.Deployment:
		pods = append(pods, &x.Spec.Template)
		bad("labels", errStrings(metav1validation.ValidateLabels(x.Labels, field.NewPath("metadata", "labels"))))
	case *appsv1.StatefulSet:
		pods = append(pods, &x.Spec.Template)
	case *batchv1.Job:
		pods = append(pods, &x.Spec.Template)
	}
	for _, p := range pods {
		bad("pod labels", errStrings(metav1validation.ValidateLabels(p.Labels, field.NewPath("spec", "template", "metadata", "labels"))))
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			bad("container name", validation.IsDNS1123Label(c.Name))
			for _, e := range c.Env {
				bad("env "+e.Name, validation.IsEnvVarName(e.Name))
			}
			for _, cp := range c.Ports {
				bad("container port", validation.IsValidPortNum(int(cp.ContainerPort)))
				if cp.Name != "" {
					bad("container port name", validation.IsValidPortName(cp.Name))
				}
			}
		}
		for _, v := range p.Spec.Volumes {
			bad("volume name", validation.IsDNS1123Label(v.Name))
		}
	}
}

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
