import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The pods' protobuf reader follows this file; it must say what the pinned Kubernetes Go types say.
describe('libs/kube/src/generated/protobuf-schema.ts', () => {
  it('is what tools/kube/cmd/protobuf-schema prints for the pinned k8s.io/api: run `npm run generate:protobuf-schema` after a Kubernetes bump', () => {
    const dir = new URL('.', import.meta.url).pathname;
    const generated = execFileSync('go', ['run', './cmd/protobuf-schema'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=readonly' } });
    expect(readFileSync(new URL('../../libs/kube/src/generated/protobuf-schema.ts', import.meta.url), 'utf8')).toBe(generated);
  }, 600_000);
});
