import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@outrigger/admission';
import { defaultPullPolicy, withApiServerDefaults } from './api-server-defaults.js';

describe('withApiServerDefaults', () => {
  it('fills in what the API server adds to a container on create', () => {
    const container: JsonObject = {
      name: 'agent',
      image: 'registry.example/agent:1.0',
      ports: [{ containerPort: 9999 }],
      env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'A', value: 'b' }],
      resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { memory: '512Mi' } },
    };
    expect(withApiServerDefaults(container, false)).toEqual({
      name: 'agent',
      image: 'registry.example/agent:1.0',
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      ports: [{ containerPort: 9999, protocol: 'TCP' }],
      env: [{ name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }, { name: 'A', value: 'b' }],
      resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '500m', memory: '512Mi' } },
    });
    expect(container['ports']).toEqual([{ containerPort: 9999 }]);
  });

  it('keeps what is set, gives an empty resources, and a hostPort on a hostNetwork pod', () => {
    const defaulted = withApiServerDefaults({ name: 'a', image: 'a', imagePullPolicy: 'Never', ports: [{ containerPort: 80, protocol: 'UDP' }] }, true);
    expect(defaulted).toMatchObject({ imagePullPolicy: 'Never', resources: {}, ports: [{ containerPort: 80, protocol: 'UDP', hostPort: 80 }] });
  });

  it('drops empty lists of quantities, as the API server writes them back', () => {
    expect(withApiServerDefaults({ name: 'a', image: 'a:1', resources: { limits: {}, requests: {} } }, false)['resources']).toEqual({});
  });
});

describe('defaultPullPolicy', () => {
  it.each([
    ['registry.example/agent', 'Always'],
    ['registry.example/agent:latest', 'Always'],
    ['registry.example:5000/agent', 'Always'],
    ['registry.example:5000/agent:1.0', 'IfNotPresent'],
    ['registry.example/agent@sha256:0123', 'IfNotPresent'],
    ['registry.example/agent:latest@sha256:0123', 'Always'],
  ])('%s is pulled %s', (image, policy) => {
    expect(defaultPullPolicy(image)).toBe(policy);
  });
});
