import { registerAs, type ConfigType } from '@nestjs/config';
import { INSTALL_NAMES } from '@outrigger/install/names';
import { envField, parseServiceEnv } from '@outrigger/service';
import { z } from 'zod';

const schema = z.object({
  PORT: envField.port(8443),
  TLS_CERT_FILE: z.string().min(1, 'path of the serving certificate (PEM) is required'),
  TLS_KEY_FILE: z.string().min(1, 'path of the serving key (PEM) is required'),
  /** Optional: require client certificates signed by this CA (only the API server holds one). */
  CLIENT_CA_FILE: z.string().optional(),
  /**
   * Optional: the serving Secret (`name` in POD_NAMESPACE, or `namespace/name`), watched through the
   * API so a new leaf is served within a second; the kubelet refreshes the mounted files only
   * every 30–100 s. The files stay the fallback.
   */
  TLS_SECRET: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, 'must be <name> or <namespace>/<name>')
    .optional(),
  /** For the AgentProfile watch and TLS_SECRET: the kubeconfig; in a pod, unset (the ServiceAccount is used). */
  KUBECONFIG: z.string().optional(),
  /** AgentProfile documents (local runs, tests). Unset: AgentProfiles are watched through the API. */
  PROFILES_FILE: z.string().optional(),
  /** The injector's own namespace: never mutated (set from the downward API). */
  POD_NAMESPACE: z.string().default(INSTALL_NAMES.namespace),
  /** Polling interval for file changes, on top of inotify (ConfigMap and Secret volumes swap symlinks). */
  FILE_POLL: envField.duration('10s'),
  /** The API server sends pods up to ~1.5 MiB, plus oldObject on updates. */
  BODY_LIMIT_BYTES: z.coerce.number().int().min(3 * 1024 * 1024).default(8 * 1024 * 1024),
});

export const injectorConfig = registerAs('injector', () => {
  // Strict: a retired or mistyped variable stops startup, named (libs/service strict-settings.ts).
  const env = parseServiceEnv(schema);
  return {
    port: env.PORT,
    tls: {
      certFile: env.TLS_CERT_FILE,
      keyFile: env.TLS_KEY_FILE,
      clientCaFile: env.CLIENT_CA_FILE,
      secret: env.TLS_SECRET ? secretRef(env.TLS_SECRET, env.POD_NAMESPACE) : undefined,
    },
    kubeconfig: env.KUBECONFIG,
    profilesFile: env.PROFILES_FILE,
    ownNamespace: env.POD_NAMESPACE,
    filePollMs: env.FILE_POLL,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
  };
});

export type InjectorConfig = ConfigType<typeof injectorConfig>;

function secretRef(value: string, defaultNamespace: string): { namespace: string; name: string } {
  const slash = value.indexOf('/');
  return slash < 0 ? { namespace: defaultNamespace, name: value } : { namespace: value.slice(0, slash), name: value.slice(slash + 1) };
}
