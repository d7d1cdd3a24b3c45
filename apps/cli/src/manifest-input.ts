import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** One input of `inject`/`uninject`: a file's text and where it came from. */
export interface ManifestSource {
  readonly name: string;
  readonly text: string;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * The manifests named on the command line, in order: `-` is stdin, a directory is every
 * .yaml/.yml/.json file below it (sorted, as `kubectl apply -R -f` reads them).
 */
export function readManifestSources(paths: readonly string[], readStdin: () => string = () => readFileSync(0, 'utf8')): ManifestSource[] {
  return (paths.length === 0 ? ['-'] : paths).flatMap((path) => {
    if (path === '-') return [{ name: 'stdin', text: readStdin() }];
    if (!statSync(path).isDirectory()) return [{ name: path, text: readFileSync(path, 'utf8') }];
    return filesBelow(path).map((file) => ({ name: file, text: readFileSync(file, 'utf8') }));
  });
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return filesBelow(path);
      return entry.isFile() && MANIFEST_FILE.test(entry.name) ? [path] : [];
    });
}

/** Several outputs as one YAML stream: each starts on its own document. */
export function joinManifestOutputs(outputs: readonly string[]): string {
  return outputs.map((text, i) => (i === 0 || /^---\s*$/m.test(text.split('\n', 1)[0] ?? '') ? text : `---\n${text}`)).map((t) => (t.endsWith('\n') || t === '' ? t : `${t}\n`)).join('');
}
