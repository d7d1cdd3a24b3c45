import { describe, expect, it } from 'vitest';
import type { KubeClient } from './kube-request.js';
import { streamWatch, type WatchEvent } from './watch-stream.js';

/** A client whose watch answers with these chunks of bytes. */
function answering(chunks: readonly string[]): KubeClient {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      chunks.forEach((c) => controller.enqueue(encoder.encode(c)));
      controller.close();
    },
  });
  return { server: 'https://test', request: async () => ({ status: 200, headers: {}, body: { text: async () => '', stream: () => stream } }) } as unknown as KubeClient;
}

const line = (name: string, extra = '') => `${JSON.stringify({ type: 'ADDED', object: { metadata: { name, annotations: { pad: extra } } } })}\n`;

async function events(chunks: readonly string[]): Promise<WatchEvent[]> {
  const seen: WatchEvent[] = [];
  await streamWatch(answering(chunks), '/api/v1/pods', {}, new AbortController().signal, (e) => seen.push(e));
  return seen;
}

describe('streamWatch', () => {
  it('parses events split across many chunks, several in one chunk, and a last line without newline', async () => {
    const big = line('big', 'x'.repeat(300_000));
    const pieces = big.match(/[\s\S]{1,16384}/g) ?? [];
    const last = line('last').trimEnd();
    const seen = await events([line('a') + line('b').slice(0, 10), line('b').slice(10), ...pieces, '\n', last]);
    expect(seen.map((e) => e.object.metadata?.name)).toEqual(['a', 'b', 'big', 'last']);
    expect(seen[2]?.object.metadata?.annotations?.['pad']).toHaveLength(300_000);
  });

  it('splits a multi-byte character across chunks correctly', async () => {
    const bytes = new TextEncoder().encode(line('ü'));
    const inside = bytes.indexOf(0xc3) + 1; // between the two bytes of ü
    const client = {
      server: 'https://test',
      request: async () => ({
        status: 200,
        headers: {},
        body: { text: async () => '', stream: () => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(bytes.slice(0, inside)), c.enqueue(bytes.slice(inside)), c.close()) }) },
      }),
    } as unknown as KubeClient;
    const seen: WatchEvent[] = [];
    await streamWatch(client, '/api/v1/pods', {}, new AbortController().signal, (e) => seen.push(e));
    expect(seen.map((e) => e.object.metadata?.name)).toEqual(['ü']);
  });
});
