import { describe, expect, it } from 'vitest';
import { INJECTOR_VERSION } from './version.js';

describe('the injector version in the status stamp', () => {
  it('is, in the source tree, the package version marked +dev, never a bare release number', () => {
    expect(INJECTOR_VERSION).toMatch(/^\d+\.\d+\.\d+\+dev$/);
  });
});
