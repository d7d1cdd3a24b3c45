import { Observable, type ConfigurationOptions, type ObservableMiddleware } from '@kubernetes/client-node';

/**
 * Per-call options for client-node's typed APIs that abort the request after `ms`, e.g.
 * `core.readNamespacedPod({ name, namespace }, withRequestTimeout(5_000))`. The typed APIs have
 * no timeout of their own, so a call on a half-open connection would otherwise wait forever.
 */
export function withRequestTimeout(ms: number, options?: ConfigurationOptions<ObservableMiddleware>): ConfigurationOptions<ObservableMiddleware> {
  const timeout: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { ...options, middleware: [...(options?.middleware ?? []), timeout], middlewareMergeStrategy: 'append' };
}
