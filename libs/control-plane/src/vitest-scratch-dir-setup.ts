import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import type { TestProject } from 'vitest/node';
import { scratchDir } from './scratch-dir.js';

/**
 * Vitest globalSetup of every project: the run's temporary files (the tests', and those of the
 * services and tools they start, which inherit TMPDIR) go into one directory, removed when the run
 * passes and kept, with its path printed, when it fails.
 */
export default function setup(project: TestProject): () => void {
  const previous = process.env['TMPDIR'];
  const scratch = scratchDir(tmpdir(), `outrigger-${basename(project.config.root)}-`);
  process.env['TMPDIR'] = scratch.dir;
  return () => {
    if (previous === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = previous;
    // The State API is experimental in Vitest, which the workspace pins to one version.
    const failed = project.vitest.state.getCountOfFailedTests() > 0 || project.vitest.state.getUnhandledErrors().length > 0;
    const outcome = scratch.finish(failed);
    if (outcome.kept) console.error(outcome.why);
  };
}
