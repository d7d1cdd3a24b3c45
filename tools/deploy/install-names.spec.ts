import { join } from 'node:path';
import { INJECTOR_NAME, INSTALL_NAMESPACE as HARNESS_NAMESPACE, resolveBinaries } from '@outrigger/control-plane';
import { INSTALL_NAMES, SERVICE_NAMES } from '@outrigger/install';
import { beforeAll, describe, expect, it } from 'vitest';
import { render, type KubeObject } from './render.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON */

let prod: KubeObject[];

beforeAll(async () => {
  prod = render(join(await resolveBinaries(), 'kubectl'), 'overlays/prod');
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
