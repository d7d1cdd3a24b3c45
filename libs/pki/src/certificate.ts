import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface Issued {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM private key (PKCS#1 RSA). */
  readonly key: string;
}

export type Usage = 'ca' | 'server' | 'client';

export interface CertificateRequest {
  readonly commonName: string;
  readonly usage: Usage;
  /** Lifetime from `now`; a leaf is clamped so it never outlives its issuer. */
  readonly lifetimeMs: number;
  readonly issuer?: Issued;
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly keyBits?: number;
  readonly now?: Date;
}

/** Clock skew between nodes must not make a fresh certificate "not yet valid". */
export const BACKDATE_MS = 5 * 60_000;

/** Issues a self-signed CA (usage `ca` without issuer) or a certificate signed by `issuer`. */
export function issueCertificate(req: CertificateRequest): Issued {
  if (req.usage !== 'ca' && !req.issuer) throw new Error(`${req.commonName}: a ${req.usage} certificate needs an issuer`);
  const now = req.now ?? new Date();
  // Node's native generator is orders of magnitude faster than forge's pure-JS one.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: req.keyBits ?? 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + req.lifetimeMs);

  const subject = [{ name: 'commonName', value: req.commonName }, ...(req.organizations ?? []).map((o) => ({ name: 'organizationName', value: o }))];
  cert.setSubject(subject);

  const issuerCert = req.issuer ? forge.pki.certificateFromPem(req.issuer.cert) : undefined;
  const signingKey = forge.pki.privateKeyFromPem(req.issuer?.key ?? keyPem);
  if (issuerCert && cert.validity.notAfter > issuerCert.validity.notAfter) cert.validity.notAfter = issuerCert.validity.notAfter;
  cert.setIssuer(issuerCert ? issuerCert.subject.attributes : subject);
  cert.setExtensions(extensionsFor(req, issuerCert));
  cert.sign(signingKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keyPem };
}

function extensionsFor(req: CertificateRequest, issuerCert: forge.pki.Certificate | undefined): object[] {
  const ext: object[] = [{ name: 'subjectKeyIdentifier' }];
  if (issuerCert) {
    const issuerKeyId = issuerCert.generateSubjectKeyIdentifier().getBytes();
    ext.push({ name: 'authorityKeyIdentifier', keyIdentifier: issuerKeyId });
  }
  if (req.usage === 'ca') {
    ext.push({ name: 'basicConstraints', cA: true, critical: true });
    ext.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true });
    return ext;
  }
  ext.push({ name: 'basicConstraints', cA: false, critical: true });
  ext.push({ name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true });
  ext.push({ name: 'extKeyUsage', serverAuth: req.usage === 'server', clientAuth: req.usage === 'client' });
  const altNames = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(req.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  if (altNames.length > 0) ext.push({ name: 'subjectAltName', altNames });
  return ext;
}

/** 16 random bytes, first bit cleared so the DER INTEGER stays positive, never all-zero leading. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x01;
  return bytes.toString('hex');
}
