/** The `CERTIFICATE` blocks of PEM text, in order (a caBundle holds several CAs during a rotation). */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((pem) => `${pem}\n`) ?? [];
}
