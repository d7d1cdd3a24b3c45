// Command policy-typecheck type-checks every CEL expression of the ValidatingAdmissionPolicies and
// of the webhooks' match conditions in manifest files, with Kubernetes' own type checker (the one
// behind a policy's status.typeChecking), against the Kubernetes types of the module it is built
// from and the CustomResourceDefinitions among the files. The API server's checker reads only
// validations and messages, and nothing of a policy matching a subresource or a wildcard version;
// a misspelt field in a variable or a match condition (`has(object.spec.initContainer)`) would
// fail open unseen. One file: tools/kube/build.sh builds it from the floor module too.
//
//	policy-typecheck FILE...
//
// Prints one JSON line per policy or webhook:
// {"file":…,"object":…,"checkedAgainst":["/v1, Kind=Pod"],"params":…,"expressions":…,"findings":[{"field":…,"issue":…}]}
// and exits 1 if any has a finding (a policy with no kind to be checked against is one).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

type finding struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

type report struct {
	File           string    `json:"file"`
	Object         string    `json:"object"`
	CheckedAgainst []string  `json:"checkedAgainst"`
	Params         string    `json:"params,omitempty"`
	Expressions    int       `json:"expressions"`
	Findings       []finding `json:"findings"`
}

// How many kinds Kubernetes' type checker checks a policy against at most.
const maxKinds = 10

// The object a CONNECT request carries: its options, not the pod.
var connectOptions = map[string]string{"pods/exec": "PodExecOptions", "pods/attach": "PodAttachOptions", "pods/portforward": "PodPortForwardOptions"}

// Schemas of the files' CustomResourceDefinitions, as the API server publishes them (with apiVersion, kind and ObjectMeta).
type crdSchemas map[schema.GroupVersionKind]*spec.Schema

func (c crdSchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if s, ok := c[gvk]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%v: %w", gvk, resolver.ErrSchemaNotFound)
}

type manifest struct {
	file string
	kind string
	raw  json.RawMessage
}

func readManifests(files []string) ([]manifest, error) {
	var out []manifest
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var raw json.RawMessage
			if err := decoder.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			var head struct{ Kind string }
			if err := json.Unmarshal(raw, &head); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			out = append(out, manifest{file, head.Kind, raw})
		}
		f.Close()
	}
	return out, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: policy-typecheck FILE...")
		os.Exit(2)
	}
	manifests, err := readManifests(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "policy-typecheck:", err)
		os.Exit(2)
	}
	builtin := resolver.NewDefinitionsSchemaResolver(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme)
	// ObjectMeta as a built-in kind carries it (its definition's name differs between Kubernetes versions).
	configMap, err := builtin.ResolveSchema(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "policy-typecheck: ObjectMeta:", err)
		os.Exit(2)
	}
	objectMeta := configMap.Properties["metadata"]
	// Resources by their kinds' guessed plurals: a wrong guess leaves a rule unresolved, which is reported.
	mapper := meta.NewDefaultRESTMapper(nil)
	for gvk := range scheme.Scheme.AllKnownTypes() {
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		mapper.AddSpecific(gvk, plural, singular, meta.RESTScopeRoot)
	}
	crds := crdSchemas{}
	for _, m := range manifests {
		if m.kind != "CustomResourceDefinition" {
			continue
		}
		if err := addCRD(m, crds, mapper, &objectMeta); err != nil {
			fmt.Fprintf(os.Stderr, "policy-typecheck: %s: %v\n", m.file, err)
			os.Exit(2)
		}
	}
	schemas := builtin.Combine(crds)
	checker := &validating.TypeChecker{SchemaResolver: schemas, RestMapper: mapper}

	failed := false
	for _, m := range manifests {
		var reports []report
		switch m.kind {
		case "ValidatingAdmissionPolicy":
			var policy admissionv1.ValidatingAdmissionPolicy
			if err := json.Unmarshal(m.raw, &policy); err != nil {
				fmt.Fprintf(os.Stderr, "policy-typecheck: %s: %v\n", m.file, err)
				os.Exit(2)
			}
			reports = append(reports, checkPolicy(checker, schemas, m.file, &policy))
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			var configuration struct {
				Metadata struct{ Name string }
				Webhooks []struct {
					Name            string
					Rules           []admissionv1.RuleWithOperations
					MatchConditions []admissionv1.MatchCondition
				}
			}
			if err := json.Unmarshal(m.raw, &configuration); err != nil {
				fmt.Fprintf(os.Stderr, "policy-typecheck: %s: %v\n", m.file, err)
				os.Exit(2)
			}
			for i, w := range configuration.Webhooks {
				// A webhook's conditions see what a parameterless policy's do: object, oldObject, request, authorizer.
				policy := admissionv1.ValidatingAdmissionPolicy{Spec: admissionv1.ValidatingAdmissionPolicySpec{
					MatchConstraints: &admissionv1.MatchResources{ResourceRules: namedRules(w.Rules)},
					MatchConditions:  w.MatchConditions,
				}}
				r := checkPolicy(checker, schemas, m.file, &policy)
				r.Object = fmt.Sprintf("%s/%s webhooks[%d] %s", m.kind, configuration.Metadata.Name, i, w.Name)
				for j := range r.Findings {
					r.Findings[j].Field = strings.Replace(r.Findings[j].Field, "spec.matchConditions", fmt.Sprintf("webhooks[%d].matchConditions", i), 1)
				}
				reports = append(reports, r)
			}
		}
		for _, r := range reports {
			if len(r.Findings) > 0 {
				failed = true
			}
			line, _ := json.Marshal(r)
			fmt.Println(string(line))
		}
	}
	if failed {
		os.Exit(1)
	}
}

func namedRules(rules []admissionv1.RuleWithOperations) []admissionv1.NamedRuleWithOperations {
	out := make([]admissionv1.NamedRuleWithOperations, len(rules))
	for i, r := range rules {
		out[i] = admissionv1.NamedRuleWithOperations{RuleWithOperations: r}
	}
	return out
}

func addCRD(m manifest, crds crdSchemas, mapper *meta.DefaultRESTMapper, objectMeta *spec.Schema) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(m.raw, &crd); err != nil {
		return err
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return err
		}
		structural, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return err
		}
		s := structural.ToKubeOpenAPI()
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties["apiVersion"] = *spec.StringProperty()
		s.Properties["kind"] = *spec.StringProperty()
		s.Properties["metadata"] = *objectMeta
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		crds[gvk] = s
		plural := gvk.GroupVersion().WithResource(crd.Spec.Names.Plural)
		mapper.AddSpecific(gvk, plural, gvk.GroupVersion().WithResource(crd.Spec.Names.Singular), meta.RESTScopeRoot)
	}
	return nil
}

// checkPolicy checks every expression of a policy. Wildcard versions are spelt out (the API server's
// checker skips them); match conditions are checked without the policy's variables, which they cannot see.
func checkPolicy(checker *validating.TypeChecker, schemas resolver.SchemaResolver, file string, policy *admissionv1.ValidatingAdmissionPolicy) report {
	policy = checkable(policy)
	r := report{File: file, Object: "ValidatingAdmissionPolicy/" + policy.Name, CheckedAgainst: kindsToCheck(checker, schemas, policy), Findings: []finding{}}
	if len(r.CheckedAgainst) == 0 {
		r.Findings = append(r.Findings, finding{"spec.matchConstraints", "no rule names a kind whose schema resolves (a wildcard group or resource, or an unknown kind): nothing is checked"})
	}
	if len(r.CheckedAgainst) > maxKinds {
		r.Findings = append(r.Findings, finding{"spec.matchConstraints", fmt.Sprintf("%d kinds: Kubernetes' checker reads only the first %d", len(r.CheckedAgainst), maxKinds)})
	}
	if p := policy.Spec.ParamKind; p != nil {
		gv, _ := schema.ParseGroupVersion(p.APIVersion)
		gvk := gv.WithKind(p.Kind)
		r.Params = gvk.String()
		if _, err := schemas.ResolveSchema(gvk); err != nil {
			r.Findings = append(r.Findings, finding{"spec.paramKind", fmt.Sprintf("params unchecked: %v", err)})
		}
	}
	check := func(ctx *validating.TypeCheckingContext, field, expression string) {
		if expression == "" {
			return
		}
		r.Expressions++
		if len(r.CheckedAgainst) == 0 {
			return
		}
		results := checker.CheckExpression(ctx, expression)
		if holdsForOne(results, r.CheckedAgainst) {
			return
		}
		if escaped := escapeReserved(expression); escaped != expression && holdsForOne(checker.CheckExpression(ctx, escaped), r.CheckedAgainst) {
			return
		}
		r.Findings = append(r.Findings, finding{field, strings.TrimSpace(results.String())})
	}
	ctx := checker.CreateContext(policy)
	for i, v := range policy.Spec.Variables {
		check(ctx, fmt.Sprintf("spec.variables[%d].expression", i), v.Expression)
	}
	for i, v := range policy.Spec.Validations {
		check(ctx, fmt.Sprintf("spec.validations[%d].expression", i), v.Expression)
		check(ctx, fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression)
	}
	for i, a := range policy.Spec.AuditAnnotations {
		check(ctx, fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression)
	}
	withoutVariables := policy.DeepCopy()
	withoutVariables.Spec.Variables = nil
	conditions := checker.CreateContext(withoutVariables)
	for i, c := range policy.Spec.MatchConditions {
		check(conditions, fmt.Sprintf("spec.matchConditions[%d].expression", i), c.Expression)
	}
	return r
}

// checkable is the policy with what Kubernetes' checker skips spelt out: a wildcard version as the
// versions the scheme knows, a CONNECT subresource as the resource of the options it carries.
// holdsForOne: a policy over kinds of different shapes branches on the request's resource, so an
// expression must hold for one of its kinds; a misspelt field holds for none.
func holdsForOne(results validating.TypeCheckingResults, kinds []string) bool {
	failed := map[schema.GroupVersionKind]bool{}
	for _, result := range results {
		failed[result.GVK] = true
	}
	return len(failed) < len(kinds)
}

// A property named like a CEL reserved word; older Kubernetes (1.30) types it only under its escaped
// name (`__namespace__`), while evaluation, on untyped objects, reads it as written.
var reservedProperty = regexp.MustCompile(`(\.\??)(as|break|const|continue|else|for|function|if|import|let|loop|package|namespace|return|var|void|while)\b`)

func escapeReserved(expression string) string {
	return reservedProperty.ReplaceAllString(expression, "${1}__${2}__")
}

func checkable(policy *admissionv1.ValidatingAdmissionPolicy) *admissionv1.ValidatingAdmissionPolicy {
	policy = policy.DeepCopy()
	if policy.Spec.MatchConstraints == nil {
		return policy
	}
	for i := range policy.Spec.MatchConstraints.ResourceRules {
		rule := &policy.Spec.MatchConstraints.ResourceRules[i]
		if slices.Contains(rule.APIVersions, "*") {
			var versions []string
			for _, group := range rule.APIGroups {
				for _, gv := range scheme.Scheme.PrioritizedVersionsForGroup(group) {
					if !slices.Contains(versions, gv.Version) {
						versions = append(versions, gv.Version)
					}
				}
			}
			rule.APIVersions = versions
		}
		for j, resource := range rule.Resources {
			if kind, ok := connectOptions[resource]; ok {
				plural, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Kind: kind})
				rule.Resources[j] = plural.Resource
			}
		}
	}
	return policy
}

// kindsToCheck is what the checker checks against (every kind of the rules whose schema resolves, read
// as the checker reads rules), so that a policy checked against nothing is reported rather than passed.
func kindsToCheck(checker *validating.TypeChecker, schemas resolver.SchemaResolver, policy *admissionv1.ValidatingAdmissionPolicy) []string {
	kinds := []string{}
	if policy.Spec.MatchConstraints == nil {
		return kinds
	}
	for _, rule := range policy.Spec.MatchConstraints.ResourceRules {
		for _, group := range rule.APIGroups {
			for _, version := range rule.APIVersions {
				for _, resource := range rule.Resources {
					// As the checker does: no wildcard, no subresource.
					if strings.ContainsAny(group+version+resource, "*/") {
						continue
					}
					resolved, err := checker.RestMapper.KindsFor(schema.GroupVersionResource{Group: group, Version: version, Resource: resource})
					if err != nil {
						continue
					}
					for _, gvk := range resolved {
						if _, err := schemas.ResolveSchema(gvk); err == nil && !slices.Contains(kinds, gvk.String()) {
							kinds = append(kinds, gvk.String())
						}
					}
				}
			}
		}
	}
	slices.Sort(kinds)
	return kinds
}
