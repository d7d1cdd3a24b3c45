import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Calls `onChange` when any of `files` may have changed: inotify on their directories (kubelet
 * updates Secret and ConfigMap volumes by swapping a symlink, which only the directory sees) plus
 * a poll, because inotify misses changes on some volume types. Callers compare content themselves.
 */
export function watchFiles(files: readonly string[], pollMs: number, onChange: () => void): () => void {
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((f) => dirname(f)))) {
    try {
      const watcher = watch(dir, { persistent: false }, () => onChange());
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
