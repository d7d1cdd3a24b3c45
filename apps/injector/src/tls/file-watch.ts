import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Calls `onChange` when any of `files` may have changed: inotify on their directories (kubelet
 * updates Secret and ConfigMap volumes by swapping a symlink, which only the directory sees) plus
 * a poll, because inotify misses changes on some volume types. Callers compare content themselves.
 */
export function watchFiles(files: readonly string[], pollMs: number, onChange: () => void): () => void {
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((f) => dirname(f)))) {
    const names = new Set(files.filter((f) => dirname(f) === dir).map((f) => basename(f)));
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (mayConcern(name, names)) onChange();
      });
      watcher.on('error', () => undefined); // the poll still covers it
      watchers.push(watcher);
    } catch {
      // directory not watchable: the poll covers it
    }
  }
  const timer = setInterval(onChange, pollMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    watchers.forEach((w) => w.close());
  };
}

/**
 * Whether a change to directory entry `name` may change one of the watched `names`. Kubelet's
 * atomic writer only touches entries that start with `..` (`..data`, `..data_tmp`, the timestamped
 * directory); anything else in the directory (a log, an editor's swap file) is not ours to reread for.
 */
export function mayConcern(name: string | null, names: ReadonlySet<string>): boolean {
  return name === null || names.has(name) || name.startsWith('..');
}
