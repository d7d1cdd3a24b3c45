/**
 * The addresses of the local cluster. Every one lives on an interface the harness creates: the API
 * server, kubelet and cluster DNS on an alias of `lo`, pods on the CNI bridge. None of them is
 * routed anywhere outside this machine.
 */
export const CLUSTER_NETWORK = {
  /** Host address (an alias on lo) for the API server, the kubelet and cluster DNS. */
  hostAddress: '10.245.0.1',
  apiServerPort: 6443,
  /** The cluster's registries (Distribution) on the host address: open, and htpasswd-protected. */
  registryPort: 5000,
  privateRegistryPort: 5001,
  /** Where the node sends pulls from any other registry: nothing listens there, so they fail at once. */
  refusedRegistryPort: 1,
  /** The CNI bridge and the pods' subnet (host-local IPAM); the bridge holds the gateway address. */
  bridge: 'outrigger0',
  podCidr: '10.244.0.0/24',
  serviceCidr: '10.96.0.0/16',
  /** The `kubernetes` Service's ClusterIP: the first address of serviceCidr. */
  apiServiceAddress: '10.96.0.1',
  clusterDomain: 'cluster.local',
  nodeName: 'outrigger-node',
  /** Our own iptables chain in the mangle table (it runs before kube-proxy's filter rules). */
  isolationChain: 'OUTRIGGER-PODS',
  /** The nfqueue that carries new pod connections to the NetworkPolicy engine for its verdict. */
  policyQueue: 100,
  /** kubelet's cgroupRoot: every pod's cgroup lives below it, in every hierarchy. */
  cgroupRoot: 'outrigger',
} as const;
