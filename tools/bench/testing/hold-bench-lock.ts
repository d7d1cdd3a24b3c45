// A bench's start, for bench-lock.spec.ts: take the lock at the path given, say so, then idle until killed.
import { holdBenchLock } from '../bench-lock.js';

holdBenchLock(process.argv[2]);
console.log('locked');
setInterval(() => undefined, 1_000);
