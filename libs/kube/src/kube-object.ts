/** The parts of any Kubernetes object this library reads; objects are kept as the apiserver's raw JSON. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly [field: string]: unknown;
  };
  readonly [field: string]: unknown;
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`object without metadata.name: ${JSON.stringify(obj).slice(0, 200)}`);
  const namespace = obj.metadata?.namespace;
  // join() builds one flat string; a template literal keeps a cons string and both parts alive (a store holds 100 000s of keys).
  return namespace ? [namespace, name].join('/') : name;
}

/** The inverse of objectKey. */
export function splitObjectKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
