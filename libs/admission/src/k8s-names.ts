/** Kubernetes name rules (apimachinery validation), as used by the profile schema. */

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;

export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_SUBDOMAIN_MAX = 253;

/** The name part of a qualified name (label or annotation key after the prefix). */
export const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
export const QUALIFIED_NAME_PART_MAX = 63;

/** Environment variable names as kube-apiserver has long accepted them. */
export const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** IANA service names, the rule for container port names. */
export const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]$|^[a-z]$/;
export const PORT_NAME_MAX = 15;

/** resource.Quantity: `100m`, `64Mi`, `1.5`, `2e3`. */
export const QUANTITY = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** The downward API fields an env var can reference with fieldRef. */
export const ENV_FIELD_PATH =
  /^(metadata\.(name|namespace|uid)|metadata\.(labels|annotations)\['[^']+'\]|spec\.(nodeName|serviceAccountName)|status\.(hostIP|hostIPs|podIP|podIPs))$/;

export function isDnsLabel(value: string): boolean {
  return value.length <= DNS_LABEL_MAX && DNS_LABEL.test(value);
}

export function isDnsSubdomain(value: string): boolean {
  return value.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN.test(value);
}

/** An annotation key prefix: a DNS subdomain followed by `/`. */
export function isAnnotationPrefix(value: string): boolean {
  return value.endsWith('/') && isDnsSubdomain(value.slice(0, -1));
}

export function isQualifiedNamePart(value: string): boolean {
  return value.length <= QUALIFIED_NAME_PART_MAX && QUALIFIED_NAME_PART.test(value);
}
