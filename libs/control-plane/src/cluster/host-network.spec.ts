import { describe, expect, it } from 'vitest';
import { ruleWords } from './host-network.js';

describe('ruleWords', () => {
  it('splits an iptables -S rule into arguments, keeping a quoted comment whole', () => {
    expect(ruleWords('PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES')).toEqual([
      'PREROUTING', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES',
    ]);
    expect(ruleWords('INPUT -j KUBE-FIREWALL')).toEqual(['INPUT', '-j', 'KUBE-FIREWALL']);
  });
});
