import { connect } from 'node:tls';

/** SHA-256 fingerprint of the certificate a TLS server on 127.0.0.1 presents (nothing verified). */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      done(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.setTimeout(2_000, () => socket.destroy(new Error(`TLS handshake with 127.0.0.1:${port} timed out`)));
    socket.on('error', fail);
  });
}
