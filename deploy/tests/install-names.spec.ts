import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INJECTOR_NAME, INSTALL_NAMESPACE as HARNESS_NAMESPACE, resolveBinaries, DEPLOY_DIR, render, type RenderedObject } from '@outrigger/control-plane';
import { baseLabels, EXEC_GUARD_FILE, INJECTOR_SERVICE_FILE, INSTALL_NAMES, SERVICE_NAMES, SERVICE_RBAC_FILES, type ServiceComponent, shippedPolicies } from '@outrigger/install';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON */

let prod: RenderedObject[];
let kubectl: string;

beforeAll(async () => {
  kubectl = join(await resolveBinaries(), 'kubectl');
  prod = render(kubectl, 'overlays/prod');
}, 300_000);

const names = (kind: string) => prod.filter((o) => o.kind === kind).map((o) => o.metadata.name).sort();
const find = (kind: string, name: string) => prod.find((o) => o.kind === kind && o.metadata.name === name) as any;
const resourceNames = (role: any) => role.rules.flatMap((r: any) => r.resourceNames ?? []);

describe('install names (libs/install INSTALL_NAMES)', () => {
  it('the test harness, which cannot import libs/install, spells them the same', () => {
    expect({ namespace: HARNESS_NAMESPACE, injector: INJECTOR_NAME }).toEqual({ namespace: INSTALL_NAMES.namespace, injector: INSTALL_NAMES.injector });
  });

  it('deploy/ gives its objects these names', () => {
    const services = Object.values(SERVICE_NAMES).sort();
    expect(names('Namespace')).toEqual([INSTALL_NAMES.namespace]);
    expect(names('Deployment')).toEqual(services);
    expect(names('ServiceAccount')).toEqual(services);
    expect(names('MutatingWebhookConfiguration')).toEqual([INSTALL_NAMES.webhook]);
    expect(names('ValidatingAdmissionPolicy')).toContain(INSTALL_NAMES.execGuard);
    expect(names('ValidatingAdmissionPolicyBinding')).toContain(INSTALL_NAMES.execGuard);
    expect(names('Service')).toContain(INSTALL_NAMES.injector);
  });

  it("deploy/ ships exactly the admission policies libs/install's shippedPolicies names (what `outrigger check` reads), each with its binding, from the file it names", () => {
    expect(names('ValidatingAdmissionPolicy')).toEqual(shippedPolicies().map((p) => p.name).sort());
    expect(names('ValidatingAdmissionPolicyBinding')).toEqual(shippedPolicies().map((p) => p.name).sort());
    for (const { name, file } of shippedPolicies()) {
      const inFile = parseAllDocuments(readFileSync(join(DEPLOY_DIR, '..', file), 'utf8')).map((d) => d.toJS() as RenderedObject);
      expect(inFile.filter((o) => o.metadata.name === name).map((o) => o.kind), file).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    }
  });

  it('deploy/ refers to them where the services read them', () => {
    const webhook = find('MutatingWebhookConfiguration', INSTALL_NAMES.webhook);
    expect(webhook.webhooks[0].clientConfig.service).toMatchObject({ namespace: INSTALL_NAMES.namespace, name: INSTALL_NAMES.injector });
    expect(webhook.metadata.annotations['outrigger.dev/inject-ca-from']).toBe(`${INSTALL_NAMES.namespace}/${INSTALL_NAMES.servingSecret}`);
    const injector = find('Deployment', INSTALL_NAMES.injector).spec.template.spec;
    expect(injector.volumes).toContainEqual(expect.objectContaining({ secret: expect.objectContaining({ secretName: INSTALL_NAMES.servingSecret }) }));
    expect(injector.containers[0].env).toContainEqual({ name: 'TLS_SECRET', value: INSTALL_NAMES.servingSecret });
    expect(resourceNames(find('Role', INSTALL_NAMES.injector))).toEqual([INSTALL_NAMES.servingSecret]);
    expect(resourceNames(find('Role', INSTALL_NAMES.certManager))).toEqual(expect.arrayContaining([INSTALL_NAMES.caSecret, INSTALL_NAMES.servingSecret, INSTALL_NAMES.certManager]));
    expect(resourceNames(find('Role', `${INSTALL_NAMES.rbacSyncer}-leader-election`))).toEqual([INSTALL_NAMES.rbacSyncer]);
    expect(resourceNames(find('ClusterRole', INSTALL_NAMES.rbacSyncer))).toContain(INSTALL_NAMES.execGuard);
  });
});

describe('the files `outrigger restore` re-creates from (libs/install SERVICE_RBAC_FILES)', () => {
  const RBAC_KINDS = ['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'];
  const fileObjects = (file: string) => parseAllDocuments(readFileSync(join(DEPLOY_DIR, '..', file), 'utf8')).map((d) => d.toJS() as RenderedObject).filter(Boolean);
  const key = (o: RenderedObject) => `${o.kind}/${o.metadata.name}`;

  it.each(Object.keys(SERVICE_RBAC_FILES) as ServiceComponent[])('hold all of base/%s\'s ServiceAccount and RBAC, nothing else', (component) => {
    const rendered = render(kubectl, `base/${component}`).filter((o) => RBAC_KINDS.includes(o.kind));
    expect(SERVICE_RBAC_FILES[component].flatMap(fileObjects).map(key).sort()).toEqual(rendered.map(key).sort());
  });

  it('label each object as its base does, so one created alone is what `kubectl apply -k` made', () => {
    const files: [ServiceComponent, string][] = [
      ...(Object.entries(SERVICE_RBAC_FILES) as [ServiceComponent, readonly string[]][]).flatMap(([component, list]) => list.map((f): [ServiceComponent, string] => [component, f])),
      ['injector', INJECTOR_SERVICE_FILE],
      ['rbac-syncer', EXEC_GUARD_FILE],
    ];
    for (const [component, file] of files) {
      const base = new Map(render(kubectl, `base/${component}`).map((o) => [key(o), o.metadata.labels]));
      for (const object of fileObjects(file)) {
        expect(object.metadata.labels, `${file} ${key(object)}`).toEqual(baseLabels(component));
        expect(base.get(key(object)), `${file} ${key(object)}`).toEqual(baseLabels(component));
      }
    }
  });
});
