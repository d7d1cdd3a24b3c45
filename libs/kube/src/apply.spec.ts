import { describe, expect, it } from 'vitest';
import { jsonPointer } from './apply.js';

describe('jsonPointer', () => {
  it('escapes ~ before / (RFC 6901)', () => {
    expect(jsonPointer('metadata', 'annotations', 'outrigger.io/profile')).toBe('/metadata/annotations/outrigger.io~1profile');
    expect(jsonPointer('a~1b')).toBe('/a~01b');
    expect(jsonPointer('webhooks', 0, 'clientConfig', 'caBundle')).toBe('/webhooks/0/clientConfig/caBundle');
  });
});
