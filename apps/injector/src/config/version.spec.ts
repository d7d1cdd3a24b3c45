import { describe, expect, it } from 'vitest';
import { INJECTOR_VERSION, injectorVersion } from './version.js';

describe('the injector version in the status stamp', () => {
  it("is the build's version when the image build wrote one", () => {
    expect(injectorVersion('1.2.0\n', '0.1.0')).toBe('1.2.0');
    expect(injectorVersion('0.1.0+3f2a9c1d0b7e.dirty\n', '0.1.0')).toBe('0.1.0+3f2a9c1d0b7e.dirty');
  });

  it('is the package version marked +dev otherwise, never a bare release number', () => {
    expect(injectorVersion(undefined, '0.1.0')).toBe('0.1.0+dev');
    expect(injectorVersion('\n', '0.1.0')).toBe('0.1.0+dev');
    expect(INJECTOR_VERSION).toMatch(/^\d+\.\d+\.\d+\+dev$/);
  });
});
