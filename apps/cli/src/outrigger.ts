import { agentsCommand, agentsUsage } from './agents.command.js';
import { checkCommand, checkUsage } from './check.command.js';
import { CLI_VERSION } from './cli-version.js';
import { type CommandIo, processIo } from './command-io.js';
import { injectCommand, injectUsage } from './inject.command.js';
import { restoreCommand, restoreUsage } from './restore.command.js';
import { rolloutCommand, rolloutUsage } from './rollout.command.js';
import { uninstallCommand, uninstallUsage } from './uninstall.command.js';

const usage = `outrigger ${CLI_VERSION}: operate Outrigger (agent sidecars for Kubernetes)

commands:
  check       every condition Outrigger needs, against the current kubeconfig
  agents      which agent each workload's pods run: current, outdated or missing
  rollout     rollout restart: restart the workloads whose agents are outdated or missing
  restore     create what of Outrigger is missing from manifests, changing nothing that exists
  inject      add agents to manifests, as the webhook would (files, directories, stdin)
  uninject    remove them again
  uninstall   remove Outrigger and what its rbac-syncer created (--dry-run to list)
  version     print the version

Run outrigger <command> --help for its options.

${checkUsage}

${agentsUsage}

${rolloutUsage}

${restoreUsage}

${injectUsage}

${uninstallUsage}`;

/** Runs one command line; the exit code: 0 ok, 1 a failed check or bad input, 2 unknown command. */
export async function run(argv: readonly string[], io: CommandIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'check':
        return await checkCommand(rest, io);
      case 'agents':
        return await agentsCommand(rest, io);
      case 'rollout':
        return await rolloutCommand(rest, io);
      case 'restore':
        return await restoreCommand(rest, io);
      case 'inject':
      case 'uninject':
        return await injectCommand(command, rest, io);
      case 'uninstall':
        return await uninstallCommand(rest, io);
      case 'version':
      case '--version':
        io.out(`${CLI_VERSION}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(`${usage}\n`);
        return 0;
      default:
        io.err(`outrigger: unknown command ${JSON.stringify(command)}; run outrigger --help\n`);
        return 2;
    }
  } catch (error) {
    // Bad arguments, unreadable files, an unreachable cluster: one line naming it, no stack.
    const message = error instanceof Error ? error.message : String(error);
    io.err(`outrigger ${command}: ${message}\n`);
    return 1;
  }
}
