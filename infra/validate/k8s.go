package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Object is one object of a built kustomization: its kind and name, its JSON,
// and, for the built-in kinds, the typed object it decoded into.
type Object struct {
	Kind, Name, Namespace string
	JSON                  []byte
	Typed                 runtime.Object // nil for custom resources
	Custom                map[string]any // the custom resource, for KEDA's kinds
}

// Build runs kustomize (the library `kubectl apply -k` and `kustomize build`
// run) on dir and decodes every object strictly: an unknown or duplicate
// field of a built-in kind is an error, as is a kind this package does not
// know.
func Build(dir string) ([]Object, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []Object
	for _, r := range rm.Resources() {
		js, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		o := Object{Kind: r.GetKind(), Name: r.GetName(), Namespace: r.GetNamespace(), JSON: js}
		switch r.GetApiVersion() {
		case "keda.sh/v1alpha1":
			// As the API server decodes it: integers as int64.
			if err := utiljson.Unmarshal(js, &o.Custom); err != nil {
				return nil, err
			}
		default:
			obj, _, err := dec.Decode(js, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s %s/%s: %w", dir, o.Kind, o.Name, err)
			}
			o.Typed = obj
		}
		out = append(out, o)
	}
	return out, nil
}

// CRD holds one version's schema of a CustomResourceDefinition, ready to
// prune and validate objects as the API server does.
type CRD struct {
	Group, Kind, Version string
	structural           *structuralschema.Structural
	validator            apiservervalidation.SchemaValidator
	cel                  *cel.Validator
}

// LoadCRD reads a CustomResourceDefinition (strictly) and prepares the
// schema of its storage version.
func LoadCRD(path string) (*CRD, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("%s: version %s has no schema", path, v.Name)
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, err
		}
		s, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		val, _, err := apiservervalidation.NewSchemaValidator(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &CRD{
			Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Version: v.Name,
			structural: s, validator: val,
			cel: cel.NewValidator(s, true, 1000000), // the API server's per-call limit
		}, nil
	}
	return nil, fmt.Errorf("%s: no storage version", path)
}

// Validate checks a custom resource as the API server would on create: the
// apiVersion and kind, the fields its schema does not know (which the server
// would silently prune), the OpenAPI schema and the CEL rules.
func (c *CRD) Validate(obj map[string]any) error {
	if av := fmt.Sprint(obj["apiVersion"]); av != c.Group+"/"+c.Version {
		return fmt.Errorf("apiVersion %s; the CRD serves %s/%s", av, c.Group, c.Version)
	}
	if k := fmt.Sprint(obj["kind"]); k != c.Kind {
		return fmt.Errorf("kind %s; the CRD is for %s", k, c.Kind)
	}
	cp, err := deepCopyJSON(obj)
	if err != nil {
		return err
	}
	if pruned := pruning.PruneWithOptions(cp, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(pruned) > 0 {
		return fmt.Errorf("fields unknown to the %s schema (the API server would drop them): %s", c.Kind, strings.Join(pruned, ", "))
	}
	errs := apiservervalidation.ValidateCustomResource(nil, obj, c.validator)
	if c.cel != nil {
		celErrs, _ := c.cel.Validate(context.Background(), nil, c.structural, obj, nil, math.MaxInt64)
		errs = append(errs, celErrs...)
	}
	if len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// deepCopyJSON copies an object as the API server decodes it (int64 and
// float64 numbers).
func deepCopyJSON(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ScalerParam is one parameter of a KEDA scaler's typed metadata.
type ScalerParam struct {
	Name, GoType string
	Trigger      bool   // read from trigger metadata
	Auth         bool   // read from authentication parameters
	Deprecated   string // the deprecation message, if any
}

var kedaTagRE = regexp.MustCompile(`(?m)^\s*\w+\s+(\[\]string|string|int64|int|bool|float64)\s+` + "`" + `keda:"([^"]*)"` + "`")

// ScalerParams reads the parameters of a KEDA scaler from its source (the
// struct tags keda:"name=..., order=..." of pkg/scalers/<name>_scaler.go).
func ScalerParams(kedaDir, scaler string) (map[string]ScalerParam, error) {
	b, err := os.ReadFile(filepath.Join(kedaDir, "pkg", "scalers", scaler+"_scaler.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]ScalerParam{}
	for _, m := range kedaTagRE.FindAllStringSubmatch(string(b), -1) {
		p := ScalerParam{GoType: m[1]}
		for _, part := range strings.Split(m[2], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "name":
				p.Name = strings.TrimSpace(v)
			case "order":
				p.Trigger = strings.Contains(v, "triggerMetadata")
				p.Auth = strings.Contains(v, "authParams")
			case "deprecated":
				p.Deprecated = v
			}
		}
		if p.Name != "" {
			out[p.Name] = p
		}
	}
	if len(out) < 5 {
		return nil, fmt.Errorf("validate: only %d parameters found in KEDA's %s scaler", len(out), scaler)
	}
	return out, nil
}

var queueTypesFuncRE = regexp.MustCompile(`(?s)func getQueueTypes\(.*?\n}\n`)
var caseRE = regexp.MustCompile(`case "(\w+)":`)

// ScalerQueueTypes reads the queueTypes values KEDA's temporal scaler knows
// (getQueueTypes in pkg/scalers/temporal_scaler.go); it silently maps any
// other value to an unspecified queue type.
func ScalerQueueTypes(kedaDir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(kedaDir, "pkg", "scalers", "temporal_scaler.go"))
	if err != nil {
		return nil, err
	}
	fn := queueTypesFuncRE.Find(b)
	out := map[string]bool{}
	for _, m := range caseRE.FindAllSubmatch(fn, -1) {
		out[string(m[1])] = true
	}
	if !out["activity"] {
		return nil, fmt.Errorf("validate: no queue types found in KEDA's getQueueTypes (%v)", keys(out))
	}
	return out, nil
}
