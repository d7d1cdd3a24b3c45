import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { CLUSTER_NETWORK as NET } from './cluster-network.js';
import { host, tryHost } from './host-command.js';

const FORWARD_CHAIN = `${NET.isolationChain}-FORWARD`;
const INPUT_CHAIN = `${NET.isolationChain}-INPUT`;
const POLICY_CHAIN = `${NET.isolationChain}-POLICY`;
const HOST_ADDRESS = `${NET.hostAddress}/32`;

/** Kernel settings a node needs; their previous values are saved and restored at teardown. */
const SYSCTLS: Record<string, string> = {
  // kube-proxy's Service DNAT between pods on the bridge needs both.
  '/proc/sys/net/ipv4/ip_forward': '1',
  '/proc/sys/net/bridge/bridge-nf-call-iptables': '1',
};

/** The jump rules from the built-in chains into ours (mangle runs before kube-proxy's filter rules). */
const JUMPS: readonly (readonly string[])[] = [
  ['FORWARD', '-j', FORWARD_CHAIN],
  ['INPUT', '-s', NET.podCidr, '-j', INPUT_CHAIN],
  ['POSTROUTING', '-j', POLICY_CHAIN],
];

/**
 * Pods may talk to each other over the bridge, and to the host only at the API server and the
 * cluster DNS. Everything a pod sends that would leave through another interface, and anything
 * arriving for a pod from another interface, is dropped: pods never reach beyond this machine.
 */
const RULES: Record<string, readonly (readonly string[])[]> = {
  [FORWARD_CHAIN]: [
    ['-s', NET.podCidr, '!', '-o', NET.bridge, '-j', 'DROP'],
    ['-d', NET.podCidr, '!', '-i', NET.bridge, '-j', 'DROP'],
  ],
  [INPUT_CHAIN]: [
    ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'RETURN'],
    ['-d', NET.hostAddress, '-p', 'tcp', '--dport', String(NET.apiServerPort), '-j', 'RETURN'],
    ['-d', NET.hostAddress, '-p', 'udp', '--dport', '53', '-j', 'RETURN'],
    ['-d', NET.hostAddress, '-p', 'tcp', '--dport', '53', '-j', 'RETURN'],
    ['-j', 'DROP'],
  ],
  // NetworkPolicy: every new connection to or from a pod waits for the engine's verdict (dropped while
  // none listens), as kube-network-policies' own nftables rules would send it; this kernel has no
  // nftables queue expression, so iptables' NFQUEUE carries it. Root on the node (the API server,
  // kubelet's probes) passes, as upstream lets it.
  [POLICY_CHAIN]: [
    ['-m', 'owner', '--uid-owner', '0', '-j', 'RETURN'],
    ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'RETURN'],
    ['-s', NET.podCidr, '-j', 'NFQUEUE', '--queue-num', String(NET.policyQueue)],
    ['-d', NET.podCidr, '-j', 'NFQUEUE', '--queue-num', String(NET.policyQueue)],
  ],
};

/** Adds the host address, the isolation rules and the sysctls; saves what it changes to `stateFile` first. */
export function setUpHostNetwork(stateFile: string): void {
  const saved = Object.fromEntries(Object.keys(SYSCTLS).map((path) => [path, readFileSync(path, 'utf8').trim()]));
  writeFileSync(stateFile, JSON.stringify({ sysctls: saved }));
  for (const [path, value] of Object.entries(SYSCTLS)) writeFileSync(path, value);
  host('ip', ['addr', 'add', HOST_ADDRESS, 'dev', 'lo', 'label', 'lo:outrigger']);
  for (const [chain, rules] of Object.entries(RULES)) {
    host('iptables', ['-w', '-t', 'mangle', '-N', chain]);
    for (const rule of rules) host('iptables', ['-w', '-t', 'mangle', '-A', chain, ...rule]);
  }
  for (const [builtin, ...rule] of JUMPS) host('iptables', ['-w', '-t', 'mangle', '-I', builtin ?? '', '1', ...rule]);
}

/** Undoes setUpHostNetwork and removes the CNI bridge and kubelet's chains; safe to run when some or all of it is already gone. */
export function tearDownHostNetwork(stateFile: string): void {
  removeKubeChains();
  for (const [builtin, ...rule] of JUMPS) {
    while (tryHost('iptables', ['-w', '-t', 'mangle', '-D', builtin ?? '', ...rule]));
  }
  for (const chain of Object.keys(RULES)) {
    tryHost('iptables', ['-w', '-t', 'mangle', '-F', chain]);
    tryHost('iptables', ['-w', '-t', 'mangle', '-X', chain]);
  }
  tryHost('ip', ['link', 'delete', NET.bridge]);
  tryHost('ip', ['addr', 'del', HOST_ADDRESS, 'dev', 'lo']);
  if (existsSync(stateFile)) {
    const { sysctls } = JSON.parse(readFileSync(stateFile, 'utf8')) as { sysctls: Record<string, string> };
    for (const [path, value] of Object.entries(sysctls)) writeFileSync(path, value);
  }
}

/**
 * kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT), and whatever kube-proxy's
 * cleanup missed: on this host they can only be the local cluster's (startCluster refuses to run
 * beside another kubelet or kube-proxy).
 */
function removeKubeChains(): void {
  for (const table of TABLES) {
    const rules = host('iptables', ['-w', '-t', table, '-S']).split('\n');
    for (const rule of rules.filter((r) => /^-A [A-Z]+ .*-j KUBE-/.test(r) && !/^-A KUBE-/.test(r))) {
      tryHost('iptables', ['-w', '-t', table, '-D', ...ruleWords(rule.slice(3))]);
    }
    const chains = rules.filter((r) => r.startsWith('-N KUBE-')).map((r) => r.slice(3));
    for (const chain of chains) tryHost('iptables', ['-w', '-t', table, '-F', chain]);
    for (const chain of chains) tryHost('iptables', ['-w', '-t', table, '-X', chain]);
  }
}

const TABLES = ['mangle', 'filter', 'nat'] as const;

/** `iptables -S` output back into arguments: words, with "quoted comments" as one word. */
export function ruleWords(rule: string): string[] {
  return [...rule.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** Whether a process listens on the NetworkPolicy engine's nfqueue. */
export function policyQueueBound(): boolean {
  const queues = existsSync(QUEUES) ? readFileSync(QUEUES, 'utf8') : '';
  return queues.split('\n').some((line) => line.trim().split(/\s+/)[0] === String(NET.policyQueue));
}

const QUEUES = '/proc/net/netfilter/nfnetlink_queue';

/** What of the host network setup is still there (empty after a clean teardown). */
export function hostNetworkLeftovers(): string[] {
  const found: string[] = [];
  if (host('ip', ['-o', 'addr', 'show', 'dev', 'lo']).includes(` ${HOST_ADDRESS} `)) found.push(`address ${HOST_ADDRESS} on lo`);
  if (tryHost('ip', ['link', 'show', NET.bridge])) found.push(`interface ${NET.bridge}`);
  for (const table of TABLES) {
    const chains = host('iptables', ['-w', '-t', table, '-S'])
      .split('\n')
      .filter((line) => /^-N (OUTRIGGER|KUBE|CNI)-/.test(line));
    found.push(...chains.map((line) => `iptables ${table} chain ${line.slice(3)}`));
  }
  return found;
}
