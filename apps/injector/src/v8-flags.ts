import { setFlagsFromString } from 'node:v8';

// Imported first by main.ts, before anything allocates per request. V8 pretenures an allocation
// site whose objects mostly survive a scavenge; one large pod (1.5 MiB: every copy outlives several
// scavenges) was enough to tenure the sites of the per-request pod copies for good. From then on each
// request's garbage went straight to the old generation and kept its young children alive: ~900 KB
// promoted per scavenge instead of ~70 KB, scavenges of 5-10 ms, a major GC every few seconds, and a
// p99 at 1000 req/s of 15-22 ms instead of under 5 (tools/bench/injector-bench.ts). A webhook's
// allocations are all per request and short-lived, so it has nothing to gain from pretenuring.
// NODE_OPTIONS does not accept V8 flags, and this way every way of starting the injector gets it.
setFlagsFromString('--no-allocation-site-pretenuring');
