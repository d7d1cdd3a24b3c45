import { X509Certificate } from 'node:crypto';

export interface CertificateInfo {
  readonly subject: string;
  readonly serial: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly isCa: boolean;
  readonly fingerprint256: string;
}

/** Splits a PEM bundle into its certificates (a caBundle may hold several CAs during rotation). */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((pem) => `${pem}\n`) ?? [];
}

export function inspectCertificate(pem: string): CertificateInfo {
  const x = new X509Certificate(pem);
  return {
    subject: x.subject,
    serial: x.serialNumber,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    isCa: x.ca,
    fingerprint256: x.fingerprint256,
  };
}

/** True when `leafPem` was signed by one of the CAs in `bundle`. */
export function verifiesAgainst(leafPem: string, bundle: string): boolean {
  const leaf = new X509Certificate(leafPem);
  return splitPemBundle(bundle).some((ca) => {
    const caCert = new X509Certificate(ca);
    return leaf.checkIssued(caCert) && leaf.verify(caCert.publicKey);
  });
}
