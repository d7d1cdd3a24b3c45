import { describe, expect, it } from 'vitest';
import { AgentReport, filterRows } from './agent-report.js';
import type { WorkloadRef } from './workload-owner.js';

const web: WorkloadRef = { kind: 'Deployment', namespace: 'shop', name: 'web', apiVersion: 'apps/v1', known: true };
const pg: WorkloadRef = { kind: 'StatefulSet', namespace: 'db', name: 'pg', apiVersion: 'apps/v1', known: true };
const debug: WorkloadRef = { kind: 'Pod', namespace: 'shop', name: 'debug', apiVersion: 'v1', known: true };

describe('AgentReport', () => {
  it('counts each workload and profile once, whatever the number of pods, with the revisions seen', () => {
    const report = new AgentReport(new Map([['xxl-job', 'aaaa'], ['otel', 'bbbb']]), (profile, hash) => profile === 'xxl-job' && hash === 'old1');
    for (let i = 0; i < 1_000; i++) report.add(web, 'xxl-job', i % 4 === 0 ? { state: 'outdated', hash: 'old1', verified: true } : { state: 'current' });
    report.add(web, 'otel', { state: 'missing' });
    report.add(pg, 'xxl-job', { state: 'outdated', hash: undefined, verified: false });
    report.add(pg, 'xxl-job', { state: 'outdated', hash: 'gone', verified: false });
    expect(report.size).toBe(3);
    expect(report.rows()).toEqual([
      { workload: pg, profile: 'xxl-job', pods: 2, current: 0, outdated: 2, missing: 0, revisions: [{ hash: 'gone', pods: 1, current: false, known: false, notInjected: 1 }, { hash: 'unknown', pods: 1, current: false, known: false, notInjected: 1 }] },
      { workload: web, profile: 'otel', pods: 1, current: 0, outdated: 0, missing: 1, revisions: [] },
      { workload: web, profile: 'xxl-job', pods: 1_000, current: 750, outdated: 250, missing: 0, revisions: [{ hash: 'aaaa', pods: 750, current: true, known: true, notInjected: 0 }, { hash: 'old1', pods: 250, current: false, known: true, notInjected: 0 }] },
    ]);
  });

  it('counts the pods of a kept spec whose agent the injector cannot have written, whichever pod comes first', () => {
    for (const order of [
      [false, true, true],
      [true, true, false],
    ]) {
      const report = new AgentReport(new Map([['xxl-job', 'aaaa']]), () => true);
      for (const verified of order) report.add(web, 'xxl-job', { state: 'outdated', hash: 'old1', verified });
      expect(report.rows()[0]?.revisions).toEqual([{ hash: 'old1', pods: 3, current: false, known: true, notInjected: 1 }]);
    }
  });

  it('--outdated and --missing keep the rows with such pods, either when both are given', () => {
    const report = new AgentReport(new Map([['xxl-job', 'aaaa']]), () => true);
    report.add(web, 'xxl-job', { state: 'outdated', hash: 'old1', verified: true });
    report.add(pg, 'xxl-job', { state: 'current' });
    report.add(debug, 'xxl-job', { state: 'missing' });
    const names = (outdated: boolean, missing: boolean) => filterRows(report.rows(), { outdated, missing }).map((r) => r.workload.name);
    expect(names(false, false)).toEqual(['pg', 'web', 'debug']);
    expect(names(true, false)).toEqual(['web']);
    expect(names(false, true)).toEqual(['debug']);
    expect(names(true, true)).toEqual(['web', 'debug']);
  });
});
