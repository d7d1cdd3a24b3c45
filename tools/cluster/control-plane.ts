import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane } from '@outrigger/control-plane';
import { hangupLog, stopOnSignals } from './cluster-session.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string', default: '.outrigger/kubeconfig' } } });
const kubeconfig = resolve(values.kubeconfig ?? '.outrigger/kubeconfig');

const cp = await startControlPlane({ log: (line) => console.log(`  ${line}`) });
mkdirSync(dirname(kubeconfig), { recursive: true });
copyFileSync(cp.kubeconfigPath, kubeconfig);
console.log(`
Kubernetes ${cp.version} is running at ${cp.server} (etcd + kube-apiserver only: no scheduler,
no controller-manager, so pods stay Pending and namespaces need their default ServiceAccount).

  export KUBECONFIG=${kubeconfig}
  alias kubectl=${cp.binDir}/kubectl
  kubectl get namespaces

kube-apiserver presents a client certificate to webhooks that ask for one (mutual TLS);
its CA, for the injector's CLIENT_CA_FILE: ${cp.webhookClientCaFile}

Press Ctrl-C to stop.`);

stopOnSignals(cp, hangupLog(kubeconfig), 'the control plane');
