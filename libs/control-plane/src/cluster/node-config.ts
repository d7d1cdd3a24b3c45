import { stringify } from 'yaml';
import { CLUSTER_NETWORK as NET } from './cluster-network.js';

/** Where the node keeps everything: one directory, so teardown knows what is ours. */
export interface NodePaths {
  readonly dir: string;
  readonly containerdSocket: string;
  readonly cniConfDir: string;
  /** containerd's registry host directory (hosts.toml per registry; see local-registry.ts). */
  readonly registryHostsDir: string;
}

export const SANDBOX_IMAGE = 'localhost/pause:local';

/** containerd 2.x (config version 3): CRI with runc, our CNI configuration, all state below `dir`. */
export function containerdConfig(paths: NodePaths, runc: string): string {
  const { dir } = paths;
  return `version = 3
root = '${dir}/containerd/root'
state = '${dir}/containerd/state'

[grpc]
  address = '${paths.containerdSocket}'

[plugins.'io.containerd.cri.v1.runtime']
  # This VM's root lacks CAP_SYS_RESOURCE: without it every sandbox fails to set its OOM score.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = 'io.containerd.runc.v2'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = '${runc}'
      Root = '${dir}/containerd/runc'
      SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '${paths.cniConfDir}'

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '${paths.registryHostsDir}'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '${SANDBOX_IMAGE}'
`;
}

/** The pod network: one bridge, host-local addresses, no masquerading (nothing is routed off the host). */
export function cniConfig(dir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'outrigger',
      plugins: [
        {
          type: 'bridge',
          bridge: NET.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir: `${dir}/cni-ipam`, ranges: [[{ subnet: NET.podCidr }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
      ],
    },
    null,
    2,
  );
}

export interface KubeletFiles {
  readonly dir: string;
  readonly caFile: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly resolvConf: string;
  readonly containerdSocket: string;
  readonly healthzPort: number;
}

/** KubeletConfiguration for a cgroup v1 host with the cgroupfs driver, every path below `dir`. */
export function kubeletConfig(f: KubeletFiles): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NET.hostAddress,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: f.healthzPort,
    tlsCertFile: f.servingCert,
    tlsPrivateKeyFile: f.servingKey,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: f.caFile } },
    // Only clients with a certificate from the cluster CA get here, and pods cannot reach the port.
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${f.containerdSocket}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${NET.cgroupRoot}`,
    failCgroupV1: false,
    failSwapOn: false,
    clusterDNS: [NET.hostAddress],
    clusterDomain: NET.clusterDomain,
    // Pods get only the cluster's DNS, never the host's resolver.
    resolvConf: f.resolvConf,
    podLogsDir: `${f.dir}/pod-logs`,
    // The images are imported, not pulled: never garbage-collect them, never evict for a full-ish disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    serializeImagePulls: false,
    shutdownGracePeriod: '0s',
    syncFrequency: '10s',
    nodeStatusUpdateFrequency: '4s',
  });
}

export interface ProxyFiles {
  readonly kubeconfig: string;
  readonly healthzPort: number;
  readonly metricsPort: number;
}

/** kube-proxy in iptables mode; leaves the host's conntrack sysctls alone and serves only on loopback. */
export function kubeProxyConfig(f: ProxyFiles): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig: f.kubeconfig },
    hostnameOverride: NET.nodeName,
    bindAddress: NET.hostAddress,
    clusterCIDR: NET.podCidr,
    healthzBindAddress: `127.0.0.1:${f.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${f.metricsPort}`,
    nodePortAddresses: [`${NET.hostAddress}/32`],
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { minSyncPeriod: '0s', syncPeriod: '30s' },
  });
}

/**
 * CoreDNS: answers for the cluster's zones from the API and for nothing else (no forwarding), on
 * the host address only.
 */
export function corefile(kubeconfig: string, healthPort: number, readyPort: number): string {
  return `.:53 {
    bind ${NET.hostAddress}
    errors
    health 127.0.0.1:${healthPort}
    ready 127.0.0.1:${readyPort}
    kubernetes ${NET.clusterDomain} in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
    }
    cache 30
}
`;
}
