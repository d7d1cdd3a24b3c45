import { parseArgs } from 'node:util';
import { INSTALL_NAMES } from '@outrigger/install';
import { cliKubeClient } from './kube-client.js';
import { checkLines, type CheckLine } from './check/check-lines.js';
import { readInstallState } from './check/install-state.reader.js';
import { type CommandIo, UsageError } from './command-io.js';

export const checkUsage = `usage: outrigger check [--kubeconfig FILE] [--namespace NS] [--webhook NAME] [--output text|json]
Checks, against the current kubeconfig, everything Outrigger needs: the CRD, the webhook
configuration and its Service, the caBundle against the certificate the injector really serves,
certificate expiry, the Deployments, the leader Leases, every AgentProfile accepted and in force
in both services, labelled namespaces, the exec guard, and the agent of every live opted-in pod
(none fails; one from an earlier spec, 7 days after the change, warns). Exits 1 when a check fails. A failed
line says what to look at (hint) and, where it can, the command that repairs it (fix): it creates
only what is missing and never applies a base over your overlay.`;

const MARK: Record<CheckLine['result'], string> = { pass: 'ok  ', warn: 'warn', fail: 'FAIL' };

export async function checkCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n', default: INSTALL_NAMES.namespace },
      webhook: { type: 'string', default: INSTALL_NAMES.webhook },
      output: { type: 'string', short: 'o', default: 'text' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return io.out(`${checkUsage}\n`), 0;
  if (values.output !== 'text' && values.output !== 'json') throw new UsageError(`--output must be text or json, got ${JSON.stringify(values.output)}`);
  const kc = cliKubeClient(values.kubeconfig);
  const lines = checkLines(await readInstallState(kc, { namespace: values.namespace, webhookName: values.webhook }));
  const failed = lines.filter((l) => l.result === 'fail').length;
  if (values.output === 'json') {
    io.out(`${JSON.stringify({ ok: failed === 0, checks: lines }, null, 2)}\n`);
  } else {
    for (const line of lines) {
      io.out(`${MARK[line.result]} ${line.check}: ${line.message}\n`);
      if (line.result !== 'pass' && line.hint) io.out(`       hint: ${line.hint}\n`);
      if (line.result !== 'pass' && line.fix) io.out(`       fix:  ${line.fix}\n`);
    }
    io.out(failed === 0 ? `\nall ${lines.length} checks passed\n` : `\n${failed} of ${lines.length} checks failed\n`);
  }
  return failed === 0 ? 0 : 1;
}
